// Ends, at the member actor: this member stops (its world stops, or the actor system shuts
// down), and tells the others it leaves on purpose; another member says it leaves; rank 0 says
// a member it saw go was lost or left.
#include "member_handlers.hpp"

namespace troupe::detail {

namespace {

/// Tells every member reached that this one leaves, fails what this member waits for, answers
/// what it holds for others, and quits.
void stop(member_actor* self) {
  auto& st = self->state;
  const auto me = st.core->options.rank;
  // A member cut off from its world's store was lost, not leaving: the others say so.
  for (std::size_t rank = 0; rank < st.peers.size() && !st.partitioned; ++rank)
    if (st.peers[rank] && static_cast<int>(rank) != me && !st.lost[rank])
      leave_message::send(self, st.peers[rank], static_cast<std::int32_t>(me));
  for (auto& request : st.pending.take_all())
    request.reply->set_error(std::make_exception_ptr(state_error("the world has stopped")));
  for (auto& reply : st.core->direct.stop())
    reply->set_error(std::make_exception_ptr(state_error("the world has stopped")));
  st.awaiting_peer.clear(); // their requests were in `pending`
  st.for_coordinator.clear();
  const auto label = st.core->label(st.core->options.rank) + " has stopped";
  const auto gone = failure::of<peer_lost>(label);
  for (auto& [_, call] : st.serving)
    call.answer.deliver(gone);
  st.serving.clear();
  for (auto& [_, join] : st.joins)
    deliver(join.promise, gone);
  st.joins.clear();
  st.groups.fail_all(gone);
  barriers_stopped(self, label);
  st.peers.clear(); // handles kept in state would keep this actor's system from shutting down
  self->quit();
}

} // namespace

void on_stop_request(member_actor* self, stop_request&) { stop(self); }

void on_exit(member_actor* self, caf::exit_msg&) { stop(self); }

void on_leave(member_actor* self, std::int32_t rank) {
  if (rank >= 0 && rank == sender_rank(self))
    self->state.left[static_cast<std::size_t>(rank)] = true;
}

void on_gone(member_actor* self, std::int32_t rank, bool left) {
  auto& st = self->state;
  if (st.core->with_store() || sender_rank(self) != 0 || rank <= 0 ||
      static_cast<std::size_t>(rank) >= st.peers.size() || rank == st.core->options.rank)
    return;
  if (left)
    st.left[static_cast<std::size_t>(rank)] = true;
  // A member that left on purpose and is connected here is lost when its own actor's down
  // message comes, after everything it sent before it left (a barrier's release, say).
  if (left && st.peers[static_cast<std::size_t>(rank)])
    return;
  on_lost(self, rank);
}

} // namespace troupe::detail
