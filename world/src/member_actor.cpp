// The member actor: the one place a member's traffic comes in through. It holds the other
// members' handles and monitors them, tracks every request this member has pending on each, and
// fails those of a member that is lost (CAF itself would leave them unanswered for ever). Calls
// without a timeout to a member already reached leave from the calling thread itself
// (direct_calls.hpp); their answers come in here. Calls from other members run on the world's
// executor, never on this actor's thread, which answers them (call_answer.hpp); this actor
// counts them until they are done. On rank 0 it also forms the world (member_formation.cpp),
// coordinates groups and tells every member of a loss; how members reach each other is
// member_peers.cpp's.
#include "member_state.hpp"

#include "troupe/actors/annotated.hpp"
#include "troupe/actors/serialization.hpp"

#include <algorithm>

namespace troupe::detail {

namespace {

void stop(member_actor* self) {
  auto& st = self->state;
  const auto me = st.core->options.rank;
  for (std::size_t rank = 0; rank < st.peers.size(); ++rank)
    if (st.peers[rank] && static_cast<int>(rank) != me && !st.lost[rank])
      leave_message::send(self, st.peers[rank], static_cast<std::int32_t>(me));
  for (auto& request : st.pending.take_all())
    request.reply->set_error(std::make_exception_ptr(state_error("the world has stopped")));
  for (auto& reply : st.core->direct.stop())
    reply->set_error(std::make_exception_ptr(state_error("the world has stopped")));
  st.awaiting_peer.clear(); // their requests were in `pending`
  const auto gone = st.core->label(st.core->options.rank) + " has stopped";
  for (auto& [_, call] : st.serving)
    call.answer.deliver(reply_status::peer_lost, gone, {});
  st.serving.clear();
  for (auto& [_, join] : st.joins)
    join.promise.deliver(static_cast<std::uint8_t>(reply_status::peer_lost), gone, wire_bytes{});
  st.joins.clear();
  st.groups.fail_all(reply_status::peer_lost, gone);
  barriers_stopped(self, gone);
  st.peers.clear(); // handles kept in state would keep this actor's system from shutting down
  self->quit();
}

/// Rank 0: a service's key was withdrawn (or a member tried to): every member that remembers
/// its owner forgets it. Sent before the answer to the member that withdrew it, so a member that
/// hears of the withdrawal through rank 0 (a barrier, a lookup) has forgotten the owner by then.
void tell_withdrawn(member_actor* self, const std::string& group, const std::string& key) {
  auto& st = self->state;
  st.core->service_owners.forget(group, key);
  const auto me = static_cast<std::size_t>(st.core->options.rank);
  for (std::size_t rank = 0; rank < st.peers.size(); ++rank)
    if (rank != me && st.peers[rank] && !st.lost[rank])
      withdrawn_message::send(self, st.peers[rank], group, key);
}

/// The answer to a call from no member: peer_lost to a member this one has lost (it does not
/// rejoin, even when its connection comes back), state_error to anyone else.
std::pair<reply_status, std::string> refusal(member_actor* self) {
  auto& st = self->state;
  const auto proven = proven_name(self);
  const auto& names = st.core->names;
  const auto at = proven ? std::find(names.begin(), names.end(), *proven) : names.end();
  if (at != names.end() && st.lost[static_cast<std::size_t>(at - names.begin())])
    return {reply_status::peer_lost, st.core->label(static_cast<int>(at - names.begin())) +
                                       " was lost to this world and does not rejoin it"};
  return {reply_status::state_error, "calls are taken from this world's members only"};
}

/// What a member may bring to a rendezvous (a shape check's signature is 88 bytes).
constexpr std::size_t max_rendezvous_payload = 4096;

/// Rank 0: member `rank` arrives at a group's rendezvous.
reply_result arrive(member_actor* self, std::string what, const wire_bytes& ranks, int rank,
                    wire_bytes payload) {
  if (rank != sender_rank(self))
    return failed_reply(reply_status::invalid_argument, "a group request for rank " +
                                                          std::to_string(rank) +
                                                          " must come from that member");
  if (payload.size() > max_rendezvous_payload)
    return failed_reply(reply_status::invalid_argument,
                        "a rendezvous payload of " + std::to_string(payload.size()) +
                          " bytes, over the limit of " + std::to_string(max_rendezvous_payload));
  auto promise = self->make_response_promise<std::uint8_t, std::string, wire_bytes>();
  try {
    self->state.groups.arrive(what, deserialize<std::vector<int>>(from_wire(ranks)), rank, promise,
                              std::move(payload));
  } catch (const serialization_error& e) {
    promise.deliver(static_cast<std::uint8_t>(reply_status::serialization_error),
                    std::string{e.what()}, wire_bytes{});
  }
  return promise;
}

/// Calls one member may have waiting or running here at once over TCP (through the inboxes,
/// a member reads one request at a time): a fast sender cannot grow the executor's queue
/// without bound.
constexpr std::size_t max_calls_in_flight = 16'384;

/// Runs member `from`'s call on the executor, which answers it through `answer`; refused at
/// once when `from` has too many calls here already.
void accept_call(member_actor* self, int from, call_answer answer, std::string group,
                 incoming_call call) {
  auto& st = self->state;
  auto& in_flight = st.serving_from[static_cast<std::size_t>(from)];
  if (in_flight >= max_calls_in_flight) {
    answer.deliver(reply_status::state_error,
                   st.core->label(from) + " has " + std::to_string(in_flight) +
                     " calls waiting or running at " + st.core->label(st.core->options.rank) +
                     " already: wait for some to finish",
                   {});
    return;
  }
  ++in_flight;
  const auto id = st.next_serving++;
  st.serving.emplace(id, member_state::served_call{answer, from});
  call.from = from;
  st.core->serve(id, std::move(group), std::move(call), std::move(answer));
}

/// The answer to one of this process's direct calls (direct_calls.hpp), if from the member it
/// went to.
void on_answer(member_actor* self, std::uint64_t id, std::uint8_t status, std::string& text,
               wire_bytes& payload) {
  if (auto reply = self->state.core->direct.answered(id, sender_rank(self)))
    complete(reply, status, text, payload);
}

caf::behavior member(member_actor* self, world_core* core) {
  tsan_acquire(core); // released by spawn_member
  auto& st = self->state;
  st.core = core;
  const auto size = static_cast<std::size_t>(core->options.world_size);
  st.peers.resize(size);
  st.addresses.resize(size);
  st.lost.assign(size, false);
  st.serving_from.assign(size, 0);
  st.left.assign(size, false);
  st.peers[static_cast<std::size_t>(core->options.rank)] = caf::actor_cast<caf::actor>(self);
  core->direct.reached(core->options.rank, caf::actor_cast<caf::actor>(self));
  // A stray message must not print to stdout (a user's protocol channel, maybe).
  self->set_default_handler(caf::drop);
  self->set_down_handler([self](caf::down_msg& down) {
    const handling scope{self};
    auto& peers = self->state.peers;
    for (std::size_t rank = 0; rank < peers.size(); ++rank)
      if (peers[rank] && peers[rank].address() == down.source)
        on_lost(self, static_cast<int>(rank));
  });
  self->set_exit_handler([self](caf::exit_msg&) {
    const handling scope{self};
    stop(self);
  });
  return {
    [self](early_peer& peer) {
      const handling scope{self};
      add_peer(self, peer.rank, std::move(peer.handle));
    },
    [self](stop_request) {
      const handling scope{self};
      stop(self);
    },
    leave_message::handler([self](std::int32_t rank) {
      const handling scope{self};
      if (rank >= 0 && rank == sender_rank(self))
        self->state.left[static_cast<std::size_t>(rank)] = true;
    }),
    [self](outgoing_request& request) {
      const handling scope{self};
      send_request(self, request);
    },
    [self](sweep_request) {
      const handling scope{self};
      sweep(self);
    },
    [self](reconnect& again) {
      const handling scope{self};
      retry_reach(self, again.rank);
    },
    reach_message::handler([self](std::int32_t rank) {
      const handling scope{self};
      on_reach(self, rank);
    }),
    greet_message::handler([self] {
      const handling scope{self};
      (void)sender_rank(self); // adopts the member that connected
    }),
    [self](call_done& done) {
      const handling scope{self};
      auto at = self->state.serving.find(done.id);
      if (at == self->state.serving.end())
        return;
      --self->state.serving_from[static_cast<std::size_t>(at->second.from)];
      self->state.serving.erase(at);
    },
    [self](roster_adoption& roster) {
      const handling scope{self};
      auto& st = self->state;
      st.core->names = roster.names;
      st.core->devices = roster.devices;
      for (std::size_t rank = 0; rank < roster.hosts.size(); ++rank)
        st.addresses[rank] = endpoint{roster.hosts[rank], roster.ports[rank]};
      st.roster_known = true;
      check_ready(self);
    },
    join_message::handler([self](std::uint32_t version, std::string& name, std::int32_t rank,
                                 std::int32_t size, std::uint16_t port, std::string& host,
                                 caf::actor& handle, wire_bytes& devices) -> reply_result {
      const handling scope{self};
      if (self->state.core->options.rank != 0)
        return failed_reply(reply_status::state_error, "only rank 0 accepts joins");
      if (version != wire_version)
        return failed_reply(reply_status::invalid_argument,
                            "world: '" + name + "' speaks troupe's wire version " +
                              std::to_string(version) + ", rank 0 version " +
                              std::to_string(wire_version) +
                              ": every member must run the same troupe");
      const auto proven = proven_name(self);
      if (!proven || *proven != name)
        return failed_reply(reply_status::invalid_argument,
                            "world: a join claims the name '" + name +
                              "' but its connection proved " +
                              (proven ? "'" + *proven + "'" : "no name"));
      return accept_join(self, std::move(name), rank, size, port, std::move(host),
                         std::move(handle), devices);
    }),
    gone_message::handler([self](std::int32_t rank, bool left) {
      const handling scope{self};
      auto& st = self->state;
      if (sender_rank(self) != 0 || rank <= 0 ||
          static_cast<std::size_t>(rank) >= st.peers.size() || rank == st.core->options.rank)
        return;
      if (left)
        st.left[static_cast<std::size_t>(rank)] = true;
      // A member that left on purpose and is connected here is lost when its own actor's down
      // message comes, after everything it sent before it left (a barrier's release, say).
      if (left && st.peers[static_cast<std::size_t>(rank)])
        return;
      on_lost(self, rank);
    }),
    call_message::handler([self](std::uint8_t kind, std::string& group, std::string& key,
                                 std::string& name, std::string& type,
                                 wire_bytes& payload) -> reply_result {
      const handling scope{self};
      const int from = sender_rank(self);
      if (from < 0) {
        auto [status, why] = refusal(self);
        return failed_reply(status, std::move(why));
      }
      auto promise = self->make_response_promise<std::uint8_t, std::string, wire_bytes>();
      accept_call(self, from, call_answer{promise, self->state.core->answerer()}, std::move(group),
                  incoming_call{static_cast<call_kind>(kind), std::move(key), std::move(name),
                                std::move(type), std::move(payload)});
      return promise;
    }),
    one_way_call_message::handler([self](std::uint64_t id, std::uint8_t kind, std::string& group,
                                         std::string& key, std::string& name, std::string& type,
                                         wire_bytes& payload) {
      const handling scope{self};
      const int from = sender_rank(self);
      call_answer answer{caf::actor_cast<caf::actor>(self), self->current_sender(), id};
      if (from < 0) {
        auto [status, why] = refusal(self);
        answer.deliver(status, std::move(why), {});
        return;
      }
      accept_call(self, from, std::move(answer), std::move(group),
                  incoming_call{static_cast<call_kind>(kind), std::move(key), std::move(name),
                                std::move(type), std::move(payload)});
    }),
    answer_message::handler(
      [self](std::uint64_t id, std::uint8_t status, std::string& text, wire_bytes& payload) {
        const handling scope{self};
        on_answer(self, id, status, text, payload);
      }),
    rendezvous_message::handler(
      [self](std::string& what, wire_bytes& ranks, std::int32_t rank) -> reply_result {
        const handling scope{self};
        return arrive(self, std::move(what), ranks, rank, {});
      }),
    checked_rendezvous_message::handler([self](std::string& what, wire_bytes& ranks,
                                               std::int32_t rank,
                                               wire_bytes& payload) -> reply_result {
      const handling scope{self};
      return arrive(self, std::move(what), ranks, rank, std::move(payload));
    }),
    key_message::handler([self](std::uint8_t op, std::uint8_t table, std::string& group,
                                std::string& key, std::int32_t rank) -> reply_result {
      const handling scope{self};
      if (rank != sender_rank(self))
        return failed_reply(reply_status::invalid_argument, "a key request for rank " +
                                                              std::to_string(rank) +
                                                              " must come from that member");
      auto reply = self->state.groups.keys(static_cast<key_operation>(op),
                                           static_cast<key_table>(table), group, key, rank);
      if (static_cast<key_operation>(op) == key_operation::remove &&
          static_cast<key_table>(table) == key_table::services)
        tell_withdrawn(self, group, key);
      return reply;
    }),
    withdrawn_message::handler([self](std::string& group, std::string& key) {
      const handling scope{self};
      if (sender_rank(self) != 0)
        return;
      self->state.core->service_owners.forget(group, key);
    }),
    [self](barrier_arrival& arrival) {
      const handling scope{self};
      arrive_at_barrier(self, arrival);
    },
    barrier_message::handler([self](std::string& group, std::uint64_t n, wire_bytes& ranks,
                                    std::string& failed) -> reply_result {
      const handling scope{self};
      return child_arrives(self, group, n, ranks, failed);
    }),
    [self](barrier_answer& answer) {
      const handling scope{self};
      parent_answered(self, answer);
    },
  };
}

} // namespace

caf::actor spawn_member(world_core& core) {
  tsan_release(&core);
  return core.rt.system->spawn(member, &core);
}

} // namespace troupe::detail
