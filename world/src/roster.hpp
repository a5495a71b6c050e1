// Rank 0's roster, as every member reads it from rank 0's answer to its join: each member's
// name, host, port and devices by rank, and the world's id (which names its inboxes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace troupe::detail {

struct roster {
  std::vector<std::string> names, hosts;
  std::vector<std::uint16_t> ports;
  std::vector<std::vector<std::string>> devices;
  std::string world_id;
};

/// The roster in `bytes`: serialization_error for bytes that hold none, or for one that does not
/// list `world_size` of each (the member actor indexes its tables by rank with them).
roster read_roster(std::span<const std::byte> bytes, int world_size);

} // namespace troupe::detail
