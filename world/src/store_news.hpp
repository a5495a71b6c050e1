// What a world's store (store_seat.hpp) tells the member actor: a light header, for the
// member actor's handlers.
#pragma once

#include "store/member_record.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>
#include <caf/node_id.hpp>

#include <string>

namespace troupe::detail {

/// How a store's record names one incarnation of a member: its process and its member actor.
inline std::string incarnation_of(const caf::node_id& node, caf::actor_id actor) {
  return to_string(node) + "/" + std::to_string(actor);
}

/// The store's news for the member actor, in the store's order (store_news::cut_off whenever
/// it comes).
struct store_news {
  enum class kind { joined, left, lost, cut_off, claimed };
  kind what = kind::joined;
  /// The member it is about (claimed: this member's own record, as the store took it).
  etcd::member_record record;
  /// cut_off: why this member's lease is gone. claimed: empty.
  std::string why;
  /// claimed: the world had formed before this member claimed its rank.
  bool formed_before = false;
};

} // namespace troupe::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::store_news)
