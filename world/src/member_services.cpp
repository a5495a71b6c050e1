// Keys and services at the member actor: rank 0 keeps the groups' key tables (coordinator.hpp)
// and answers each member's operations on them (with a store, the store keeps them:
// store_seat.hpp); when a service's key is withdrawn, every member forgets who offered it.
#include "member_handlers.hpp"

namespace troupe::detail {

namespace {

/// Rank 0: a service's key was withdrawn (or a member tried to): every member that remembers
/// its owner forgets it. Sent before the answer to the member that withdrew it, so a member that
/// hears of the withdrawal through rank 0 (a barrier, a lookup) has forgotten the owner by then.
void tell_withdrawn(member_actor* self, const std::string& group, const std::string& key) {
  auto& st = self->state;
  st.core->key_owners.forget(key_table::services, group, key);
  const auto me = static_cast<std::size_t>(st.core->options.rank);
  for (std::size_t rank = 0; rank < st.peers.size(); ++rank)
    if (rank != me && st.peers[rank] && !st.lost[rank])
      withdrawn_message::send(self, st.peers[rank], group, key);
}

} // namespace

reply_result on_key(member_actor* self, std::uint8_t op, std::uint8_t table, std::string& group,
                    std::string& key, std::int32_t rank) {
  if (self->state.core->with_store())
    return failed_reply(failure::of<state_error>("this world keeps its keys in its store"));
  if (rank != sender_rank(self))
    return failed_reply(failure::of<invalid_argument>(
      "a key request for rank " + std::to_string(rank) + " must come from that member"));
  const auto operation = static_cast<key_operation>(op);
  const auto which = static_cast<key_table>(table);
  auto reply = self->state.groups.keys(operation, which, group, key, rank);
  if (operation == key_operation::remove && which == key_table::services)
    tell_withdrawn(self, group, key);
  return reply;
}

void on_withdrawn(member_actor* self, std::string& group, std::string& key) {
  const int from = sender_rank(self);
  if (from < 0 || (from != 0 && !self->state.core->with_store()))
    return; // a cache: whoever withdrew with a store is a member, and only owners withdraw
  self->state.core->key_owners.forget(key_table::services, group, key);
}

void on_services_withdrawn(member_actor* self, services_withdrawn& withdrawn) {
  tell_withdrawn(self, withdrawn.group, withdrawn.key);
}

} // namespace troupe::detail
