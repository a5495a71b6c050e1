// The member actor's handlers, one per kind of message, declared by the file that owns that part
// of the protocol; member_actor.cpp's behavior lists them. Each runs on the member actor, `self`
// its own, inside the handling scope the wrappers add (member_message::handler, local_handler).
// The messages and their fields are member_messages.hpp's (and world_core.hpp's for those of
// this process's own threads).
#pragma once

#include "member_state.hpp"

namespace troupe::detail {

/// The member actor's handler for a message only this process sends it (`Local`: a struct of
/// member_messages.hpp or world_core.hpp, or CAF's down and exit messages).
template <class Local>
auto local_handler(member_actor* self, void (*on)(member_actor*, Local&)) {
  return [self, on](Local& message) {
    const handling scope{self};
    on(self, message);
  };
}

// member_formation.cpp: forming the world.
/// Rank 0: a member asks to join; answered once the whole world has, or refused.
reply_result on_join(member_actor* self, join_fields join);
/// Rank 0 told this member the roster: it is formed once rank 0 is reached.
void on_roster(member_actor* self, roster_adoption& roster);
/// Rank 0 reached a joining member: monitored from now on.
void on_early_peer(member_actor* self, early_peer& peer);

// member_joining.cpp: members that join the formed world.
/// Rank 0 says member `rank` joined: it is taken into this member's table, and the
/// on_member_joined callbacks run.
reply_result on_joined(member_actor* self, joined_fields joined);
/// Rank 0: a member that joins the formed world at any rank asks for one (the lowest free from
/// world_size up), held for its name until it joins or the reservation expires.
reply_result on_reserve(member_actor* self, std::uint32_t version, std::string& name,
                        std::int32_t size, std::int32_t max_size);
/// Rank 0: a held rank whose member has not joined within the world's timeout is free again.
void on_reservation_expiry(member_actor* self, reservation_expiry& expiry);

// member_peers.cpp: reaching the other members, and losing them.
/// Sends a request of this process's threads, reaching its member first if need be.
void send_request(member_actor* self, outgoing_request& request);
/// Fails the requests past their deadline, and schedules the next sweep.
void on_sweep(member_actor* self, sweep_request&);
/// The reminder to look at a rank again: a lower rank is tried again, a higher one that has
/// not connected back in time fails what waits on it.
void on_reconnect(member_actor* self, reconnect& again);
/// A reach request: on rank 0, a member asking that a higher `rank` connect to it; on a
/// member, rank 0 passing on that the lower `rank` asked.
caf::result<void> on_reach(member_actor* self, std::int32_t rank);
/// A member connected as asked: adopted as the sender.
caf::result<void> on_greet(member_actor* self);
/// A monitored member's actor is gone: that member is lost.
void on_down(member_actor* self, caf::down_msg& down);

// member_calls.cpp: other members' calls here, and the answers to this member's.
/// A call from a member, answered by its reply once run on the executor.
reply_result on_call(member_actor* self, int from, call_fields call);
/// A one-way call from a member, answered by an answer_message once run.
caf::result<void> on_one_way_call(member_actor* self, int from, one_way_call_fields call);
/// The answer to one of this process's direct calls (direct_calls.hpp).
void on_answer(member_actor* self, std::uint64_t id, std::uint8_t status, std::string& text,
               wire_bytes& payload);
/// An executor thread answered a served call: it no longer counts against its caller.
void on_call_done(member_actor* self, call_done& done);

// member_services.cpp: rank 0's key tables, and who offers a service.
/// Rank 0: a key operation of member `rank` on one of its tables.
reply_result on_key(member_actor* self, std::uint8_t op, std::uint8_t table, std::string& group,
                    std::string& key, std::int32_t rank);
/// Rank 0 (with a store: the service's owner) says the service (group, key) was withdrawn: its
/// owner is forgotten here.
void on_withdrawn(member_actor* self, std::string& group, std::string& key);
/// This member withdrew its service from the world's store: the members it reached forget it.
void on_services_withdrawn(member_actor* self, services_withdrawn& withdrawn);

// member_store.cpp: a world that keeps its tables in a store.
/// The store's news: this member claimed its rank, another joined, leaves or was lost, or this
/// member's lease is gone.
void on_store_news(member_actor* self, store_news& news);
/// The reminder to try again the messages that wait for the store's news of their senders.
void on_news_tick(member_actor* self, news_tick&);

// member_groups.cpp: groups' rendezvous, on rank 0.
/// Member `rank` arrives at the rendezvous `what` of the (collective) group of `ranks`, bringing
/// what every member must agree on.
reply_result on_checked_rendezvous(member_actor* self, std::string& what, wire_bytes& ranks,
                                   std::int32_t rank, wire_bytes& payload);
/// Member `rank` arrives at the rendezvous `what` of the members present (presence_round).
reply_result on_presence_rendezvous(member_actor* self, std::string& what, std::uint8_t round,
                                    std::int32_t rank);

// member_barriers.cpp: barriers along a tree of the group.
/// This member arrives at a barrier (its caller waits on the arrival's reply).
void arrive_at_barrier(member_actor* self, barrier_arrival& arrival);
/// A child in the barrier tree arrives (or says the barrier failed below it, `failed`):
/// answered at the release, or refused.
reply_result child_arrives(member_actor* self, std::string& group, std::uint64_t n,
                           const wire_bytes& ranks, const std::string& failed);
/// This member's parent answered its arrival: the barrier ends here and below.
void parent_answered(member_actor* self, barrier_answer& answer);
/// A member was lost (or left on purpose), told after the messages before its loss: a barrier
/// waiting for it here (its parent, or a child that had not arrived) fails, everywhere; all of
/// them do when rank 0 was lost.
void barriers_lost(member_actor* self, barrier_loss& loss);
/// This member is cut off from the world (its lease in the store is gone): every barrier in
/// progress here fails, `why` saying so.
void barriers_cut_off(member_actor* self, const std::string& why);

// member_leaving.cpp: stopping, and members that leave or are gone.
/// This process's world stops: fail what is pending, answer what is held, and quit.
void on_stop_request(member_actor* self, stop_request&);
/// The actor system shuts the member actor down: the same.
void on_exit(member_actor* self, caf::exit_msg&);
/// A member says it is leaving on purpose: its end is no loss to report.
void on_leave(member_actor* self, std::int32_t rank);
/// Rank 0 says member `rank` was lost, or `left`.
void on_gone(member_actor* self, std::int32_t rank, bool left);

} // namespace troupe::detail
