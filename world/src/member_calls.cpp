// Calls between members, at the member actor: another member's call is counted and run on the
// world's executor, never on this actor's thread (call_answer.hpp says who answers it); a call
// from no member of this world is refused. The answers to this process's own direct calls
// (direct_calls.hpp) come in here too.
#include "member_handlers.hpp"

#include <algorithm>

namespace troupe::detail {

namespace {

/// Calls one member may have waiting or running here at once over TCP (through the inboxes,
/// a member reads one request at a time): a fast sender cannot grow the executor's queue
/// without bound.
constexpr std::size_t max_calls_in_flight = 16'384;

/// The answer to a call from no member: peer_lost to a member this one has lost (it does not
/// rejoin by its connection coming back) or to another incarnation than the one a member that
/// joined the formed world is (its old one, lost and replaced), state_error to anyone else.
failure refusal(member_actor* self) {
  auto& st = self->state;
  const auto proven = proven_name(self);
  const auto rank = proven ? st.core->members.rank_of(*proven) : std::nullopt;
  if (rank && st.lost[static_cast<std::size_t>(*rank)])
    return failure::of<peer_lost>(st.core->label(*rank) +
                                  " was lost to this world and does not rejoin it");
  const auto joined = rank ? st.joined_as.find(*rank) : st.joined_as.end();
  if (joined != st.joined_as.end() && joined->second != member_identity::of(self->current_sender()))
    return failure::of<peer_lost>("this is not " + st.core->label(*rank) +
                                  " as the world knows it: an old incarnation of it, lost and "
                                  "replaced, or another process that claims its name");
  return failure::of<state_error>("calls are taken from this world's members only");
}

/// Runs member `from`'s call on the executor, which answers it through `answer`; refused at
/// once when `from` has too many calls here already.
void accept_call(member_actor* self, int from, call_answer answer, std::string group,
                 incoming_call call) {
  auto& st = self->state;
  auto& in_flight = st.serving_from[static_cast<std::size_t>(from)];
  if (in_flight >= max_calls_in_flight) {
    answer.deliver(failure::of<state_error>(
      st.core->label(from) + " has " + std::to_string(in_flight) + " calls waiting or running at " +
      st.core->label(st.core->options.rank) + " already: wait for some to finish"));
    return;
  }
  ++in_flight;
  const auto id = st.next_serving++;
  st.serving.emplace(id, member_state::served_call{answer, from});
  call.from = from;
  st.core->serve(id, std::move(group), std::move(call), std::move(answer));
}

} // namespace

reply_result on_call(member_actor* self, int from, call_fields call) {
  if (from < 0)
    return failed_reply(refusal(self));
  auto promise = self->make_response_promise<std::uint8_t, std::string, wire_bytes>();
  accept_call(self, from, call_answer{promise, self->state.core->answerer()}, std::move(call.group),
              incoming_call{static_cast<call_kind>(call.kind), std::move(call.key),
                            std::move(call.name), std::move(call.type), std::move(call.payload)});
  return promise;
}

caf::result<void> on_one_way_call(member_actor* self, int from, one_way_call_fields call) {
  call_answer answer{caf::actor_cast<caf::actor>(self), self->current_sender(), call.id};
  if (from < 0) {
    answer.deliver(refusal(self));
    return {};
  }
  accept_call(self, from, std::move(answer), std::move(call.group),
              incoming_call{static_cast<call_kind>(call.kind), std::move(call.key),
                            std::move(call.name), std::move(call.type), std::move(call.payload)});
  return {};
}

void on_answer(member_actor* self, std::uint64_t id, std::uint8_t status, std::string& text,
               wire_bytes& payload) {
  if (auto reply = self->state.core->direct.answered(id, sender_rank(self)))
    complete(reply, status, text, payload);
}

void on_call_done(member_actor* self, call_done& done) {
  auto& st = self->state;
  auto at = st.serving.find(done.id);
  if (at == st.serving.end())
    return;
  --st.serving_from[static_cast<std::size_t>(at->second.from)];
  st.serving.erase(at);
}

} // namespace troupe::detail
