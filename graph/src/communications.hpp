// What the distributed partition's passes share: a communication's identity, and an exchange
// of bytes among the members of a collective group.
#pragma once

#include "troupe/collectives/collective_group.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace troupe::graph::detail {

/// One communication: who sends, who receives, under which tag.
struct comm_id {
  int src = 0, dest = 0;
  std::string tag;
  auto operator<=>(const comm_id&) const = default;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(src, dest, tag);
  }
};

inline std::string describe(const comm_id& id) {
  return "(from rank " + std::to_string(id.src) + " to rank " + std::to_string(id.dest) +
         ", tag '" + id.tag + "')";
}

/// Every member's bytes, over the group (two all_gathers: the sizes, then the padded bytes).
std::vector<std::vector<std::byte>> all_gather_bytes(collective_group& group,
                                                     const std::vector<std::byte>& mine);

} // namespace troupe::graph::detail
