// Reaching the other members and keeping track of them. A member connects to rank 0 when it
// joins, and to another member only when one of them first sends the other something: a world
// of n members has about n connections and n heartbeats a period, not n squared. The higher
// rank of a pair always makes the connection (the lower one asks it to, through rank 0), and
// the other adopts it from its first message (sender_rank): two members connecting to each
// other at once would each have CAF close one of the two connections, and lose each other. Rank
// 0 sees every member, and tells the others of a loss.
#include "member_handlers.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "troupe/actors/annotated.hpp"

#include <algorithm>

namespace troupe::detail {

namespace {

/// Attempts to reach a member before the calls waiting on it fail, `connect_pause` apart: a
/// loaded peer may drop a handshake it could not finish in time.
constexpr int max_connect_attempts = 5;
constexpr std::chrono::milliseconds connect_pause{100};

std::exception_ptr error_from_caf(const caf::error& e, const std::string& who,
                                  std::optional<std::chrono::milliseconds> timeout) {
  if (e == caf::sec::request_timeout)
    return std::make_exception_ptr(
      timeout_error("no answer from " + who + " within " +
                    readable(timeout.value_or(std::chrono::milliseconds{0}))));
  if (e == caf::sec::request_receiver_down)
    return std::make_exception_ptr(peer_lost(who + " is gone"));
  return std::make_exception_ptr(network_error("a call to " + who + " failed: " + to_string(e)));
}

void dispatch(member_actor* self, int to, std::uint64_t id, caf::message message);

/// Makes sure a sweep comes by the earliest deadline of the requests pending.
void schedule_sweep(member_actor* self) {
  auto& st = self->state;
  const auto earliest = st.pending.earliest_deadline();
  if (!earliest || (st.sweep_at && *st.sweep_at <= *earliest))
    return;
  st.sweep_at = earliest;
  const auto wait =
    std::max(*earliest - pending_requests::clock::now(), pending_requests::clock::duration::zero());
  self->delayed_send(self, std::chrono::ceil<std::chrono::microseconds>(wait), sweep_request{});
}

/// Fails the requests waiting for `rank` to be reached.
void fail_awaiting(member_actor* self, int rank, const std::string& why) {
  auto& st = self->state;
  auto waiting = st.awaiting_peer.extract(rank);
  if (!waiting)
    return;
  for (auto& [id, message] : waiting.mapped()) {
    // A coordinator request waits for the next coordinator once this one is lost (the store
    // names the next); to one that lives but cannot be reached, it fails.
    if (const auto to_coordinator = st.for_coordinator.find(id);
        to_coordinator != st.for_coordinator.end() && st.lost[static_cast<std::size_t>(rank)]) {
      to_coordinator->second.sent_to = -1;
      continue;
    }
    if (auto request = st.pending.take(id))
      request->reply->set_error(std::make_exception_ptr(
        peer_lost(st.core->label(rank) + " cannot be reached (" + why + ")")));
  }
}

/// Whether coordinator request `id`, whose dispatch to `to` failed with `e`, waits for the next
/// coordinator instead of failing: `to` is gone (with a store, another will coordinate).
bool waits_for_coordinator(member_actor* self, std::uint64_t id, int to, const caf::error& e) {
  auto& st = self->state;
  const auto found = st.for_coordinator.find(id);
  if (found == st.for_coordinator.end() || e != caf::sec::request_receiver_down)
    return false;
  if (found->second.sent_to == to) { // not sent elsewhere meanwhile
    found->second.sent_to = -1;
    if (st.coordinating != to)
      send_to_coordinator(self, id);
  }
  return true;
}

/// Reaches `rank` for the requests waiting on it: a lower rank directly, a higher one by asking
/// it, through the coordinator, to connect here (it greets once connected). If it has not
/// within the world's timeout, what waits fails.
void reach(member_actor* self, int rank) {
  auto& st = self->state;
  if (rank < st.core->options.rank) {
    connect_to(self, rank);
    return;
  }
  reach_through_coordinator(self, rank);
  self->delayed_send(self, st.core->options.timeout, reconnect{rank});
}

void dispatch(member_actor* self, int to, std::uint64_t id, caf::message message) {
  auto& st = self->state;
  tsan_release(mailbox_of(st.peers[to])); // a call to this member itself is a local send
  // No CAF timeout (pending_requests.hpp says why): a request past its deadline is failed by
  // the sweep, and its late answer finds nothing to settle.
  self->request(st.peers[to], caf::infinite, std::move(message))
    .then(
      [self, id](std::uint8_t status, std::string& text, wire_bytes& payload) {
        const handling scope{self};
        self->state.for_coordinator.erase(id);
        if (auto request = self->state.pending.take(id))
          complete(request->reply, status, text, payload);
      },
      [self, id, to](caf::error& e) {
        const handling scope{self};
        if (waits_for_coordinator(self, id, to, e))
          return;
        self->state.for_coordinator.erase(id);
        if (auto request = self->state.pending.take(id))
          request->reply->set_error(
            error_from_caf(e, self->state.core->label(request->to), request->timeout));
      });
}

} // namespace

// A loaded peer may not finish a handshake in time: a failure is tried again, a little later.
void connect_to(member_actor* self, int rank) {
  auto& st = self->state;
  const auto at = st.addresses[static_cast<std::size_t>(rank)];
  const auto deadline = pending_requests::clock::now() + st.core->options.timeout;
  connect_async(
    st.core->rt, self, at, st.core->link(st.core->member_name(rank)), deadline,
    [self, rank](caf::actor handle) {
      const handling scope{self};
      auto& st = self->state;
      st.connect_failures.erase(rank);
      if (!is_incarnation(self, rank, member_identity::of(handle))) {
        fail_awaiting(self, rank,
                      "its address answered as another incarnation than the world took in");
        return;
      }
      if (!st.lost[static_cast<std::size_t>(rank)] && !st.peers[static_cast<std::size_t>(rank)])
        add_peer(self, rank, std::move(handle));
    },
    [self, rank](const std::string& why) {
      const handling scope{self};
      auto& st = self->state;
      if (st.peers[static_cast<std::size_t>(rank)] || st.lost[static_cast<std::size_t>(rank)])
        return;
      if (++st.connect_failures[rank] < max_connect_attempts) {
        self->delayed_send(self, connect_pause, reconnect{rank});
        return;
      }
      st.connect_failures.erase(rank);
      st.greet_when_reached.erase(rank);
      fail_awaiting(self, rank, why);
    });
}

void complete(const bytes_result& reply, std::uint8_t status, const std::string& text,
              wire_bytes& payload) {
  if (const auto why = reply_failure(status, text); why.failed())
    reply->set_error(why.exception());
  else
    reply->set_value(std::move(payload));
}

std::optional<std::string> proven_name(member_actor* self) {
  const auto& sender = self->current_sender();
  if (!sender)
    return std::nullopt;
  auto peer = peer_of(self->state.core->rt, sender->node());
  return peer ? std::optional{peer->name} : std::nullopt;
}

int sender_rank(member_actor* self) {
  const auto& sender = self->current_sender();
  if (!sender)
    return -1;
  auto& st = self->state;
  const auto identity = member_identity::of(sender);
  if (const auto known = st.peers.rank_of(identity))
    return *known;
  const auto proven = proven_name(self);
  if (!proven || !st.roster_known)
    return -1;
  const auto found = st.core->members.rank_of(*proven);
  if (!found)
    return -1;
  const auto rank = static_cast<std::size_t>(*found);
  if (st.peers[rank] || st.lost[rank]) // held by another process, or gone
    return -1;
  if (!is_incarnation(self, *found, identity))
    return -1; // the name's old incarnation, or a stranger's: the world took in another

  add_peer(self, static_cast<int>(rank), caf::actor_cast<caf::actor>(sender));
  return static_cast<int>(rank);
}

void check_ready(member_actor* self) {
  auto& st = self->state;
  if (st.ready || !st.roster_known || st.coordinating < 0 ||
      !st.peers[static_cast<std::size_t>(st.coordinating)])
    return;
  st.ready = true;
  st.core->formed();
}

void add_peer(member_actor* self, int rank, caf::actor handle) {
  auto& st = self->state;
  if (st.peers[static_cast<std::size_t>(rank)] != handle) {
    self->monitor(handle);
    st.core->direct.reached(rank, handle);
    st.peers.set(rank, std::move(handle));
    if (rank == st.coordinating && st.core->with_store()) // reach requests wait for it
      for (const auto& [waiting, requests] : st.awaiting_peer)
        if (waiting > st.core->options.rank)
          reach_through_coordinator(self, waiting);
  }
  check_ready(self);
  if (st.greet_when_reached.erase(rank) > 0)
    greet_message::send(self, st.peers[static_cast<std::size_t>(rank)]);
  if (auto waiting = st.awaiting_peer.extract(rank))
    for (auto& [id, message] : waiting.mapped())
      if (st.pending.contains(id)) // not timed out meanwhile
        dispatch(self, rank, id, std::move(message));
}

void on_lost(member_actor* self, int rank) {
  auto& st = self->state;
  if (st.lost[static_cast<std::size_t>(rank)])
    return;
  st.lost[static_cast<std::size_t>(rank)] = true;
  const bool left = st.left[static_cast<std::size_t>(rank)];
  st.core->mark_gone(rank, left);
  const auto who = st.core->label(rank) + (left ? " has left the world" : " was lost");
  for (auto& request : st.pending.take_to(rank))
    request.reply->set_error(std::make_exception_ptr(peer_lost(who)));
  for (auto& reply : st.core->direct.lost(rank))
    reply->set_error(std::make_exception_ptr(peer_lost(who)));
  // Without a store the world is rank 0's: no new call leaves this member once it is lost, and
  // no member is reached without it (what waits for one fails now). With a store, the others
  // hear of a loss from the store, and the next oldest member coordinates.
  const bool world_ends = rank == 0 && !st.core->with_store();
  if (world_ends)
    st.core->direct.close();
  park_coordinator_requests(self, rank);
  st.awaiting_peer.erase(rank); // their requests were in `pending` (or wait for a coordinator)
  st.greet_when_reached.erase(rank);
  if (world_ends)
    while (!st.awaiting_peer.empty())
      fail_awaiting(self, st.awaiting_peer.begin()->first, who);
  st.groups.lost(rank, who, left);
  send_from(self, caf::actor_cast<caf::actor>(self), barrier_loss{rank, who, left});
  if (st.core->options.rank == 0 && !st.core->with_store()) // the members without a connection
    for (std::size_t other = 1; other < st.peers.size(); ++other) // to it hear it from here
      if (st.peers[other] && !st.lost[other])
        gone_message::send(self, st.peers[other], static_cast<std::int32_t>(rank), left);
  // Rank 0 fails the forming world for any member it loses; a member fails its own join only
  // for rank 0 (another lost while it joins is one loss more, before or after the roster).
  // With a store, the world forms from the store: a founder lost meanwhile is waited for again.
  if (!st.ready && !st.core->with_store() && (rank == 0 || st.core->options.rank == 0))
    st.core->formation_failed(
      std::make_exception_ptr(peer_lost(who + " while the world was forming")));
  st.core->peer_gone(rank, who, left);
}

void send_request(member_actor* self, outgoing_request& request) {
  auto& st = self->state;
  if (request.to == coordinator_role && !st.core->with_store())
    request.to = 0; // the world is rank 0's
  if (st.partitioned) {
    request.reply->set_error(std::make_exception_ptr(
      partition_error(st.core->label(st.core->options.rank) +
                      " is cut off from the world: its lease in the world's store is gone")));
    return;
  }
  if (request.to == coordinator_role) {
    const auto id = st.pending.add(coordinator_role, request.reply, request.timeout);
    if (request.timeout)
      schedule_sweep(self);
    st.for_coordinator.emplace(id, member_state::coordinator_request{std::move(request.message)});
    send_to_coordinator(self, id);
    return;
  }
  const auto to = request.to;
  if (to < 0 || static_cast<std::size_t>(to) >= st.peers.size() ||
      (!st.peers[to] && !st.roster_known)) {
    request.reply->set_error(std::make_exception_ptr(
      state_error("no member of rank " + std::to_string(to) + " is known here")));
    return;
  }
  if (st.lost[static_cast<std::size_t>(to)]) {
    request.reply->set_error(std::make_exception_ptr(peer_lost(st.core->label(to) + " was lost")));
    return;
  }
  if (st.lost[0] && !st.core->with_store() && to != st.core->options.rank &&
      !(request.after_rank_0_left && st.left[0])) { // the world is rank 0's: this member left it
    request.reply->set_error(std::make_exception_ptr(peer_lost(
      st.core->label(to) + " is out of reach: rank 0 was lost, and with it the world" +
      (st.core->options.rejoin ? " (this member joins it again once rank 0 answers)"
                               : " (this member stays out: world_options::rejoin is off)"))));
    return;
  }
  const auto id = st.pending.add(to, request.reply, request.timeout);
  if (request.timeout)
    schedule_sweep(self);
  if (st.peers[to]) {
    dispatch(self, to, id, std::move(request.message));
    return;
  }
  auto& waiting = st.awaiting_peer[to]; // the first request to it: reach it, then send
  waiting.emplace_back(id, std::move(request.message));
  if (waiting.size() == 1)
    reach(self, to);
}

void send_to_coordinator(member_actor* self, std::uint64_t id) {
  auto& st = self->state;
  const auto found = st.for_coordinator.find(id);
  if (found == st.for_coordinator.end())
    return;
  if (!st.pending.contains(id)) { // timed out meanwhile
    st.for_coordinator.erase(found);
    return;
  }
  const int to = st.coordinating;
  if (to < 0 || st.lost[static_cast<std::size_t>(to)])
    return; // the store's news will name the next coordinator
  found->second.sent_to = to;
  auto message = found->second.message; // kept: it may go again, to the next coordinator
  if (st.peers[static_cast<std::size_t>(to)]) {
    dispatch(self, to, id, std::move(message));
    return;
  }
  auto& waiting = st.awaiting_peer[to];
  waiting.emplace_back(id, std::move(message));
  if (waiting.size() == 1)
    reach(self, to);
}

void park_coordinator_requests(member_actor* self, int rank) {
  for (auto& [id, request] : self->state.for_coordinator)
    if (request.sent_to == rank)
      request.sent_to = -1;
}

void resend_to_coordinator(member_actor* self) {
  std::vector<std::uint64_t> waiting;
  for (const auto& [id, request] : self->state.for_coordinator)
    if (request.sent_to < 0)
      waiting.push_back(id);
  for (const auto id : waiting)
    send_to_coordinator(self, id);
}

void on_sweep(member_actor* self, sweep_request&) {
  auto& st = self->state;
  st.sweep_at.reset();
  for (auto& request : st.pending.take_expired(pending_requests::clock::now()))
    request.reply->set_error(std::make_exception_ptr(timeout_error(
      "no answer from " + st.core->label(request.to) + " within " + readable(*request.timeout))));
  std::erase_if(st.for_coordinator,
                [&](const auto& entry) { return !st.pending.contains(entry.first); });
  schedule_sweep(self);
}

void on_reconnect(member_actor* self, reconnect& again) {
  auto& st = self->state;
  const int rank = again.rank;
  if (st.peers[static_cast<std::size_t>(rank)] || st.lost[static_cast<std::size_t>(rank)])
    return;
  if (rank < st.core->options.rank)
    connect_to(self, rank); // tried again after a failure
  else
    fail_awaiting(self, rank, "it did not connect back within the world's timeout");
}

caf::result<void> on_reach(member_actor* self, std::int32_t rank) {
  auto& st = self->state;
  // Told to connect before this member has the roster, which holds the addresses (rank 0 sends
  // both, the roster as the answer to this member's join, which reaches this actor later): it
  // waits for the roster rather than fail to connect to an address it does not know yet.
  if (!st.roster_known)
    return caf::skip;
  const int from = sender_rank(self);
  if (from < 0 && awaits_news(self))
    return caf::skip;
  const auto size = static_cast<std::int32_t>(st.peers.size());
  if (from < 0 || rank < 0 || rank >= size || st.lost[static_cast<std::size_t>(rank)])
    return {};
  const int me = st.core->options.rank;
  const int coordinator = st.coordinating;
  if (me == coordinator && from != coordinator) { // a member asks to have a higher one connect
    if (rank > from && st.peers[static_cast<std::size_t>(rank)])
      reach_message::send(self, st.peers[static_cast<std::size_t>(rank)], from);
    return {};
  }
  if (from != coordinator || rank >= me) // from it: connect to the lower `rank`, and greet it
    return {};
  if (st.peers[static_cast<std::size_t>(rank)])
    greet_message::send(self, st.peers[static_cast<std::size_t>(rank)]);
  else if (st.greet_when_reached.insert(rank).second)
    connect_to(self, rank);
  return {};
}

caf::result<void> on_greet(member_actor* self) {
  if (sender_awaited(self, sender_rank(self))) // adopts the member that connected, once known
    return caf::skip;
  return {};
}

void on_down(member_actor* self, caf::down_msg& down) {
  if (!down.source)
    return;
  if (const auto rank = self->state.peers.rank_of({down.source.node(), down.source.id()}))
    on_lost(self, *rank);
}

} // namespace troupe::detail
