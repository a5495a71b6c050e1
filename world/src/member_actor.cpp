// The member actor: the one place a member's traffic comes in through. It holds the other
// members' handles and monitors them, tracks every request this member has pending on each, and
// fails those of a member that is lost (CAF itself would leave them unanswered for ever). Calls
// without a timeout to a member already reached leave from the calling thread itself
// (direct_calls.hpp); their answers come in here. Calls from other members run on the world's
// executor, never on this actor's thread, which answers them (call_answer.hpp); this actor
// counts them until they are done. On rank 0 it also forms the world, coordinates groups and
// tells every member of a loss; with a store, the store does that, and the oldest member
// coordinates groups.
//
// This file lists the handlers; each part of the protocol has a file of its own
// (member_handlers.hpp says which).
#include "member_handlers.hpp"

namespace troupe::detail {

namespace {

/// The state of a member of `core`'s world that has reached nobody yet but itself.
void set_up(member_actor* self, world_core* core) {
  auto& st = self->state;
  st.core = core;
  const auto size = static_cast<std::size_t>(core->options.max_world_size);
  st.peers.resize(size);
  st.addresses.resize(size);
  st.lost.assign(size, false);
  st.serving_from.assign(size, 0);
  st.left.assign(size, false);
  st.peers.set(core->options.rank, caf::actor_cast<caf::actor>(self));
  if (core->with_store()) // known once the store says who is oldest
    st.coordinating = -1;
  core->direct.reached(core->options.rank, caf::actor_cast<caf::actor>(self));
}

caf::behavior member(member_actor* self, world_core* core) {
  tsan_acquire(core); // released by spawn_member
  set_up(self, core);
  // A stray message must not print to stdout (a user's protocol channel, maybe).
  self->set_default_handler(caf::drop);
  self->set_down_handler(local_handler(self, on_down));
  self->set_exit_handler(local_handler(self, on_exit));
  return {
    // Forming the world (member_formation.cpp).
    join_message::named_handler<join_fields>(self, on_join),
    local_handler(self, on_roster),
    local_handler(self, on_early_peer),
    // Joining the formed world (member_joining.cpp).
    joined_message::named_handler<joined_fields>(self, on_joined),
    reserve_message::handler(self, on_reserve),
    local_handler(self, on_reservation_expiry),
    // Reaching the other members (member_peers.cpp).
    local_handler(self, send_request),
    local_handler(self, on_sweep),
    local_handler(self, on_reconnect),
    reach_message::handler(self, on_reach),
    greet_message::handler(self, on_greet),
    // Calls (member_calls.cpp).
    call_message::named_handler<call_fields>(self, sender_unless_awaited, on_call),
    one_way_call_message::named_handler<one_way_call_fields>(self, sender_unless_awaited,
                                                             on_one_way_call),
    answer_message::handler(self, on_answer),
    local_handler(self, on_call_done),
    // Keys and services (member_services.cpp).
    key_message::handler(self, on_key),
    withdrawn_message::handler(self, on_withdrawn),
    local_handler(self, on_services_withdrawn),
    // A world with a store (member_store.cpp).
    local_handler(self, on_store_news),
    local_handler(self, on_news_tick),
    // Groups and barriers (member_groups.cpp, member_barriers.cpp).
    checked_rendezvous_message::handler(self, on_checked_rendezvous),
    presence_rendezvous_message::handler(self, on_presence_rendezvous),
    local_handler(self, arrive_at_barrier),
    barrier_message::handler(self, child_arrives),
    local_handler(self, parent_answered),
    local_handler(self, barriers_lost),
    // Stopping and leaving (member_leaving.cpp).
    local_handler(self, on_stop_request),
    leave_message::handler(self, on_leave),
    gone_message::handler(self, on_gone),
  };
}

} // namespace

caf::actor spawn_member(world_core& core) {
  tsan_release(&core);
  return core.rt.system->spawn(member, &core);
}

} // namespace troupe::detail
