// The member actor: the one place a member's traffic goes through. It holds the other members'
// handles and monitors them, tracks every request this member has pending on each, and fails
// those of a member that is lost (CAF itself would leave them unanswered for ever). Calls from
// other members run on the world's executor, never on this actor's thread; their promises wait
// here until the executor is done. On rank 0 it also forms the world, coordinates groups and
// tells every member of a loss.
//
// A member connects to rank 0 when it joins, and to another member only when one of them first
// sends the other something: a world of n members has about n connections and n heartbeats a
// period, not n squared. The higher rank of a pair always makes the connection (the lower one
// asks it to, through rank 0), and the other adopts it from its first message (sender_rank):
// two members connecting to each other at once would each have CAF close one of the two
// connections, and lose each other.
#include "coordinator.hpp"
#include "pending_requests.hpp"
#include "world_core.hpp"

#include "troupe/actors/annotated.hpp"
#include "troupe/actors/serialization.hpp"

#include <caf/io/middleman.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace troupe::detail {

namespace {

/// A member asking rank 0 to join, waiting for the whole world.
struct pending_join {
  std::string name;
  std::string host;
  std::uint16_t port = 0;
  caf::actor handle;
  reply_promise promise;
};

struct member_state {
  world_core* core = nullptr;
  std::vector<caf::actor> peers; // by rank, once connected; this member's own at its rank
  std::vector<endpoint> addresses; // by rank, from the roster: where to connect on first use
  /// Requests (their ids in `pending`) to members not reached yet, by rank.
  std::map<int, std::vector<std::pair<std::uint64_t, caf::message>>> awaiting_peer;
  std::map<int, int> connect_failures; // attempts to reach a rank that failed in a row
  std::set<int> greet_when_reached;    // lower ranks that asked this member to connect
  std::vector<bool> lost;
  std::vector<bool> left; // said it was leaving: its end is no loss to report
  bool roster_known = false;
  bool ready = false;
  pending_requests pending; // requests this member sent
  std::optional<pending_requests::clock::time_point> sweep_at; // the next sweep scheduled
  struct served_call {
    reply_promise promise;
    int from = 0;
  };
  std::map<std::uint64_t, served_call> serving; // calls running on the executor, and whose
  std::vector<std::size_t> serving_from;        // how many of them each member made
  std::uint64_t next_serving = 0;
  std::map<int, pending_join> joins; // rank 0, while the world forms
  int unknown_addresses = 0;         // rank 0: joins whose address is still being looked up
  coordinator groups;                // rank 0
  static inline const char* name = "troupe.member";
};

using member_actor = caf::stateful_actor<member_state>;

/// Attempts to reach a member before the calls waiting on it fail.
constexpr int max_connect_attempts = 3;

std::exception_ptr error_from_caf(const caf::error& e, const std::string& who,
                                  std::optional<std::chrono::milliseconds> timeout) {
  if (e == caf::sec::request_timeout)
    return std::make_exception_ptr(timeout_error(
      "no answer from " + who + " within " + std::to_string(timeout ? timeout->count() : 0) +
      " ms"));
  if (e == caf::sec::request_receiver_down)
    return std::make_exception_ptr(peer_lost(who + " is gone"));
  return std::make_exception_ptr(network_error("a call to " + who + " failed: " + to_string(e)));
}

void complete(const bytes_result& reply, std::uint8_t status, const std::string& text,
              wire_bytes& payload) {
  if (static_cast<reply_status>(status) != reply_status::ok)
    reply->set_error(exception_for(static_cast<reply_status>(status), text));
  else
    reply->set_value(std::move(payload));
}

void add_peer(member_actor* self, int rank, caf::actor handle);

/// The name the sender's process proved when it connected (its handshake; with TLS, its
/// certificate), or nullopt if it did not come over a connection.
std::optional<std::string> proven_name(member_actor* self) {
  const auto& sender = self->current_sender();
  if (!sender)
    return std::nullopt;
  auto peer = peer_of(self->state.core->rt, sender->node());
  return peer ? std::optional{peer->name} : std::nullopt;
}

/// The rank of the member whose process sent the message being handled, or -1: a message's
/// rank is the sender's connection's, never what the message says. A member this one has no
/// handle for yet is adopted here, by the name its connection proved, if the roster has it.
int sender_rank(member_actor* self) {
  const auto& sender = self->current_sender();
  if (!sender)
    return -1;
  auto& st = self->state;
  for (std::size_t rank = 0; rank < st.peers.size(); ++rank)
    if (st.peers[rank] && st.peers[rank].node() == sender->node())
      return static_cast<int>(rank);
  const auto proven = proven_name(self);
  if (!proven || !st.roster_known)
    return -1;
  const auto& names = st.core->names;
  const auto at = std::find(names.begin(), names.end(), *proven);
  if (at == names.end())
    return -1;
  const auto rank = static_cast<std::size_t>(at - names.begin());
  if (st.peers[rank] || st.lost[rank]) // held by another process, or gone for good
    return -1;
  add_peer(self, static_cast<int>(rank), caf::actor_cast<caf::actor>(sender));
  return static_cast<int>(rank);
}


/// Formed once the roster is known and rank 0 reached (on rank 0: once everyone joined).
void check_ready(member_actor* self) {
  auto& st = self->state;
  if (st.ready || !st.roster_known || !st.peers[0])
    return;
  st.ready = true;
  st.core->formed();
}

void dispatch(member_actor* self, int to, std::uint64_t id, caf::message message);

/// `rank` is reached (this member connected, or it sent something first): what waited for it
/// goes, and a lower rank that asked to be reached is greeted.
void add_peer(member_actor* self, int rank, caf::actor handle) {
  auto& st = self->state;
  auto& slot = st.peers[static_cast<std::size_t>(rank)];
  if (slot != handle) {
    self->monitor(handle);
    slot = std::move(handle);
  }
  check_ready(self);
  if (st.greet_when_reached.erase(rank) > 0)
    self->send(slot, greet_atom::value);
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
  const auto who = st.core->label(rank) + (left ? " has left the world" : " was lost");
  for (auto& request : st.pending.take_to(rank))
    request.reply->set_error(std::make_exception_ptr(peer_lost(who)));
  st.awaiting_peer.erase(rank); // their requests were in `pending`
  st.greet_when_reached.erase(rank);
  st.groups.lost(rank, who);
  if (st.core->options.rank == 0) // the members without a connection to it hear it from here
    for (std::size_t other = 1; other < st.peers.size(); ++other)
      if (st.peers[other] && !st.lost[other])
        self->send(st.peers[other], gone_atom::value, static_cast<std::int32_t>(rank), left);
  if (!st.ready)
    st.core->formation_failed(
      std::make_exception_ptr(peer_lost(who + " while the world was forming")));
  st.core->peer_gone(rank, who, left);
}

void stop(member_actor* self) {
  auto& st = self->state;
  const auto me = st.core->options.rank;
  for (std::size_t rank = 0; rank < st.peers.size(); ++rank)
    if (st.peers[rank] && static_cast<int>(rank) != me && !st.lost[rank])
      self->send(st.peers[rank], leave_atom::value, static_cast<std::int32_t>(me));
  for (auto& request : st.pending.take_all())
    request.reply->set_error(std::make_exception_ptr(state_error("the world has stopped")));
  st.awaiting_peer.clear(); // their requests were in `pending`
  const auto gone = st.core->label(st.core->options.rank) + " has stopped";
  for (auto& [_, call] : st.serving)
    call.promise.deliver(static_cast<std::uint8_t>(reply_status::peer_lost), gone, wire_bytes{});
  st.serving.clear();
  for (auto& [_, join] : st.joins)
    join.promise.deliver(static_cast<std::uint8_t>(reply_status::peer_lost), gone, wire_bytes{});
  st.joins.clear();
  st.groups.fail_all(reply_status::peer_lost, gone);
  st.peers.clear(); // handles kept in state would keep this actor's system from shutting down
  self->quit();
}

/// Rank 0: `rank` may join unless its rank or name is taken or its world is another size.
std::optional<std::string> join_refusal(member_actor* self, const std::string& name, int rank,
                                        int size) {
  auto& st = self->state;
  const auto& options = st.core->options;
  if (size != options.world_size)
    return "'" + name + "' expects a world of " + std::to_string(size) + " members, rank 0 (" +
           options.name + ") one of " + std::to_string(options.world_size);
  if (rank <= 0 || rank >= options.world_size)
    return "'" + name + "' asks for rank " + std::to_string(rank) + ", outside 1.." +
           std::to_string(options.world_size - 1);
  if (name == options.name)
    return "the name '" + name + "' is claimed by rank 0 and rank " + std::to_string(rank);
  for (const auto& [other, join] : st.joins)
    if (join.name == name)
      return "the name '" + name + "' is claimed by rank " + std::to_string(other) +
             " and rank " + std::to_string(rank);
  return std::nullopt;
}

/// Rank 0, once every member has joined: tells each the roster and adopts them as peers.
void complete_formation(member_actor* self) {
  auto& st = self->state;
  const auto& options = st.core->options;
  std::vector<std::string> names(static_cast<std::size_t>(options.world_size));
  std::vector<std::string> hosts(names.size());
  std::vector<std::uint16_t> ports(names.size());
  names[0] = options.name;
  for (const auto& [rank, join] : st.joins) {
    names[static_cast<std::size_t>(rank)] = join.name;
    hosts[static_cast<std::size_t>(rank)] = join.host;
    ports[static_cast<std::size_t>(rank)] = join.port;
  }
  st.core->names = names;
  const auto roster = to_wire(serialize(std::tuple{names, hosts, ports, st.core->world_id}));
  st.roster_known = true;
  auto joins = std::move(st.joins);
  st.joins.clear();
  for (auto& [rank, join] : joins) {
    join.promise.deliver(static_cast<std::uint8_t>(reply_status::ok), std::string{}, roster);
    add_peer(self, rank, join.handle);
  }
}

/// Rank 0: a rank claimed twice while the world forms fails both claimants and the formation,
/// since one of them is not who it says (without a secret, any local process can claim).
reply_result refuse_both(member_actor* self, std::map<int, pending_join>::iterator first,
                         const std::string& second) {
  const auto why = "world: rank " + std::to_string(first->first) + " is claimed by both '" +
                   first->second.name + "' and '" + second + "'";
  first->second.promise.deliver(static_cast<std::uint8_t>(reply_status::invalid_argument), why,
                                wire_bytes{});
  self->state.joins.erase(first);
  self->state.core->formation_failed(std::make_exception_ptr(invalid_argument(why)));
  return failed_reply(reply_status::invalid_argument, why);
}

/// Rank 0: tells the roster once every member has joined and every address is known.
void complete_when_whole(member_actor* self) {
  auto& st = self->state;
  if (st.unknown_addresses == 0 &&
      st.joins.size() + 1 == static_cast<std::size_t>(st.core->options.world_size))
    complete_formation(self);
}

reply_result accept_join(member_actor* self, std::string name, int rank, int size,
                         std::uint16_t port, std::string host, caf::actor handle) {
  auto& st = self->state;
  if (st.roster_known) {
    const auto& names = st.core->names;
    const bool held = rank > 0 && static_cast<std::size_t>(rank) < names.size();
    return failed_reply(reply_status::invalid_argument,
                        "world: the world has formed already; '" + name + "' is too late" +
                          (held ? ": rank " + std::to_string(rank) + " is held by '" +
                                    names[static_cast<std::size_t>(rank)] + "'"
                                : std::string{}));
  }
  if (auto at = st.joins.find(rank); at != st.joins.end())
    return refuse_both(self, at, name);
  if (auto refusal = join_refusal(self, name, rank, size))
    return failed_reply(reply_status::invalid_argument, "world: " + *refusal);
  auto promise = self->make_response_promise<std::uint8_t, std::string, wire_bytes>();
  st.core->joined(rank, name, handle.node());
  st.joins.emplace(rank, pending_join{name, host, port, handle, promise});
  if (host.empty()) {
    // The member listens beyond loopback: reach it at the address it connected from. The
    // roster waits for every such address, or a member would be told to reach an empty host.
    ++st.unknown_addresses;
    self
      ->request(st.core->rt.system->middleman().actor_handle(), std::chrono::seconds{10},
                caf::get_atom::value, handle.node())
      .then(
        [self, rank](const caf::node_id&, std::string& address, std::uint16_t) {
          const handling scope{self};
          --self->state.unknown_addresses;
          if (auto at = self->state.joins.find(rank); at != self->state.joins.end())
            at->second.host = std::move(address);
          complete_when_whole(self);
        },
        [self, rank](caf::error& e) {
          const handling scope{self};
          --self->state.unknown_addresses;
          self->state.core->formation_failed(std::make_exception_ptr(network_error(
            "world: the address of rank " + std::to_string(rank) + " is unknown: " +
            to_string(e))));
        });
    return promise;
  }
  complete_when_whole(self);
  return promise;
}

/// Makes sure a sweep comes by the earliest deadline of the requests pending.
void schedule_sweep(member_actor* self) {
  auto& st = self->state;
  const auto earliest = st.pending.earliest_deadline();
  if (!earliest || (st.sweep_at && *st.sweep_at <= *earliest))
    return;
  st.sweep_at = earliest;
  const auto wait = std::max(*earliest - pending_requests::clock::now(),
                             pending_requests::clock::duration::zero());
  self->delayed_send(self, std::chrono::ceil<std::chrono::microseconds>(wait), sweep_request{});
}

/// Fails the requests past their deadline, and schedules the next sweep.
void sweep(member_actor* self) {
  auto& st = self->state;
  st.sweep_at.reset();
  for (auto& request : st.pending.take_expired(pending_requests::clock::now()))
    request.reply->set_error(std::make_exception_ptr(
      timeout_error("no answer from " + st.core->label(request.to) + " within " +
                    std::to_string(request.timeout->count()) + " ms")));
  schedule_sweep(self);
}

/// Fails the requests waiting for `rank` to be reached.
void fail_awaiting(member_actor* self, int rank, const std::string& why) {
  auto& st = self->state;
  auto waiting = st.awaiting_peer.extract(rank);
  if (!waiting)
    return;
  for (auto& [id, message] : waiting.mapped())
    if (auto request = st.pending.take(id))
      request->reply->set_error(
        std::make_exception_ptr(peer_lost(st.core->label(rank) + " cannot be reached (" + why + ")")));
}

/// Connects to the lower `rank`: for the requests waiting on it, or because it asked. A loaded
/// peer may not finish a handshake in time: a failure is tried again, a little later.
void connect_to(member_actor* self, int rank) {
  auto& st = self->state;
  const auto at = st.addresses[static_cast<std::size_t>(rank)];
  const auto deadline = pending_requests::clock::now() + st.core->options.timeout;
  connect_async(
    st.core->rt, self, at, st.core->link(st.core->names[static_cast<std::size_t>(rank)]), deadline,
    [self, rank](caf::actor handle) {
      const handling scope{self};
      auto& st = self->state;
      st.connect_failures.erase(rank);
      if (!st.lost[static_cast<std::size_t>(rank)] && !st.peers[static_cast<std::size_t>(rank)])
        add_peer(self, rank, std::move(handle));
    },
    [self, rank](const std::string& why) {
      const handling scope{self};
      auto& st = self->state;
      if (st.peers[static_cast<std::size_t>(rank)] || st.lost[static_cast<std::size_t>(rank)])
        return;
      if (++st.connect_failures[rank] < max_connect_attempts) {
        self->delayed_send(self, std::chrono::milliseconds{100}, reconnect{rank});
        return;
      }
      st.connect_failures.erase(rank);
      st.greet_when_reached.erase(rank);
      fail_awaiting(self, rank, why);
    });
}

/// Reaches `rank` for the requests waiting on it: a lower rank directly, a higher one by asking
/// it, through rank 0, to connect here (it greets once connected). If it has not within the
/// world's timeout, what waits fails.
void reach(member_actor* self, int rank) {
  auto& st = self->state;
  if (rank < st.core->options.rank) {
    connect_to(self, rank);
    return;
  }
  self->send(st.peers[0], reach_atom::value, static_cast<std::int32_t>(rank));
  self->delayed_send(self, st.core->options.timeout, reconnect{rank});
}

void send_request(member_actor* self, outgoing_request& request) {
  auto& st = self->state;
  const auto to = request.to;
  if (to < 0 || static_cast<std::size_t>(to) >= st.peers.size() ||
      (!st.peers[to] && !st.roster_known)) {
    request.reply->set_error(std::make_exception_ptr(
      state_error("no member of rank " + std::to_string(to) + " is known here")));
    return;
  }
  if (st.lost[static_cast<std::size_t>(to)]) {
    request.reply->set_error(
      std::make_exception_ptr(peer_lost(st.core->label(to) + " was lost")));
    return;
  }
  if (st.lost[0] && to != st.core->options.rank) { // the world is rank 0's: this member left it
    request.reply->set_error(std::make_exception_ptr(peer_lost(
      st.core->label(to) + " is out of reach: rank 0 was lost, and with it the world")));
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

void dispatch(member_actor* self, int to, std::uint64_t id, caf::message message) {
  auto& st = self->state;
  tsan_release(mailbox_of(st.peers[to])); // a call to this member itself is a local send
  // No CAF timeout (pending_requests.hpp says why): a request past its deadline is failed by
  // the sweep, and its late answer finds nothing to settle.
  self->request(st.peers[to], caf::infinite, std::move(message))
    .then(
      [self, id](std::uint8_t status, std::string& text, wire_bytes& payload) {
        const handling scope{self};
        if (auto request = self->state.pending.take(id))
          complete(request->reply, status, text, payload);
      },
      [self, id](caf::error& e) {
        const handling scope{self};
        if (auto request = self->state.pending.take(id))
          request->reply->set_error(
            error_from_caf(e, self->state.core->label(request->to), request->timeout));
      });
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
      self->send(st.peers[rank], withdrawn_atom::value, group, key);
}

/// The answer to a call from no member: peer_lost to a member this one has lost (it does not
/// rejoin, even when its connection comes back), state_error to anyone else.
reply_result refused_call(member_actor* self) {
  auto& st = self->state;
  const auto proven = proven_name(self);
  const auto& names = st.core->names;
  const auto at = proven ? std::find(names.begin(), names.end(), *proven) : names.end();
  if (at != names.end() && st.lost[static_cast<std::size_t>(at - names.begin())])
    return failed_reply(reply_status::peer_lost,
                        st.core->label(static_cast<int>(at - names.begin())) +
                          " was lost to this world and does not rejoin it");
  return failed_reply(reply_status::state_error, "calls are taken from this world's members only");
}

/// Calls one member may have waiting or running here at once over TCP (through the inboxes,
/// a member reads one request at a time): a fast sender cannot grow the executor's queue
/// without bound.
constexpr std::size_t max_calls_in_flight = 16'384;

reply_result accept_call(member_actor* self, int from, std::uint8_t kind, std::string group,
                         std::string key, std::string name, std::string type,
                         wire_bytes payload) {
  auto& st = self->state;
  auto& in_flight = st.serving_from[static_cast<std::size_t>(from)];
  if (in_flight >= max_calls_in_flight)
    return failed_reply(reply_status::state_error,
                        st.core->label(from) + " has " + std::to_string(in_flight) +
                          " calls waiting or running at " + st.core->label(st.core->options.rank) +
                          " already: wait for some to finish");
  ++in_flight;
  const auto id = st.next_serving++;
  auto promise = self->make_response_promise<std::uint8_t, std::string, wire_bytes>();
  st.serving.emplace(id, member_state::served_call{promise, from});
  st.core->serve(id, std::move(group),
                 incoming_call{static_cast<call_kind>(kind), std::move(key), std::move(name),
                               std::move(type), std::move(payload), from});
  return promise;
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
      const handling scope{self}; stop(self); });
  return {
    [self](early_peer& peer) {
      const handling scope{self};
      add_peer(self, peer.rank, std::move(peer.handle));
    },
    [self](stop_request) {
      const handling scope{self}; stop(self); },
    [self](leave_atom, std::int32_t rank) {
      const handling scope{self};
      if (rank >= 0 && rank == sender_rank(self))
        self->state.left[static_cast<std::size_t>(rank)] = true;
    },
    [self](outgoing_request& request) {
      const handling scope{self}; send_request(self, request); },
    [self](sweep_request) {
      const handling scope{self};
      sweep(self);
    },
    [self](reconnect& again) {
      const handling scope{self};
      auto& st = self->state;
      const auto rank = again.rank;
      if (st.peers[static_cast<std::size_t>(rank)] || st.lost[static_cast<std::size_t>(rank)])
        return;
      if (rank < st.core->options.rank)
        connect_to(self, rank); // tried again after a failure
      else
        fail_awaiting(self, rank, "it did not connect back within the world's timeout");
    },
    [self](reach_atom, std::int32_t rank) {
      const handling scope{self};
      auto& st = self->state;
      const int from = sender_rank(self);
      const auto size = static_cast<std::int32_t>(st.peers.size());
      if (from < 0 || rank < 0 || rank >= size || st.lost[static_cast<std::size_t>(rank)])
        return;
      const int me = st.core->options.rank;
      if (me == 0 && from != 0) { // a member asks rank 0 to have a higher one connect to it
        if (rank > from && st.peers[static_cast<std::size_t>(rank)])
          self->send(st.peers[static_cast<std::size_t>(rank)], reach_atom::value, from);
        return;
      }
      if (from != 0 || rank >= me) // from rank 0: connect to the lower `rank`, and greet it
        return;
      if (st.peers[static_cast<std::size_t>(rank)]) {
        self->send(st.peers[static_cast<std::size_t>(rank)], greet_atom::value);
      } else if (st.greet_when_reached.insert(rank).second) {
        connect_to(self, rank);
      }
    },
    [self](greet_atom) {
      const handling scope{self};
      (void)sender_rank(self); // adopts the member that connected
    },
    [self](call_done& done) {
      const handling scope{self};
      auto at = self->state.serving.find(done.id);
      if (at == self->state.serving.end())
        return;
      at->second.promise.deliver(static_cast<std::uint8_t>(done.answer.status),
                                 std::move(done.answer.text), to_wire(done.answer.payload));
      --self->state.serving_from[static_cast<std::size_t>(at->second.from)];
      self->state.serving.erase(at);
    },
    [self](roster_adoption& roster) {
      const handling scope{self};
      auto& st = self->state;
      st.core->names = roster.names;
      for (std::size_t rank = 0; rank < roster.hosts.size(); ++rank)
        st.addresses[rank] = endpoint{roster.hosts[rank], roster.ports[rank]};
      st.roster_known = true;
      check_ready(self);
    },
    [self](join_atom, std::uint32_t version, std::string& name, std::int32_t rank,
           std::int32_t size, std::uint16_t port, std::string& host,
           caf::actor& handle) -> reply_result {
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
                         std::move(handle));
    },
    [self](gone_atom, std::int32_t rank, bool left) {
      const handling scope{self};
      auto& st = self->state;
      if (sender_rank(self) != 0 || rank <= 0 || static_cast<std::size_t>(rank) >= st.peers.size() ||
          rank == st.core->options.rank)
        return;
      if (left)
        st.left[static_cast<std::size_t>(rank)] = true;
      on_lost(self, rank);
    },
    [self](call_atom, std::uint8_t kind, std::string& group, std::string& key, std::string& name,
           std::string& type, wire_bytes& payload) -> reply_result {
      const handling scope{self};
      const int from = sender_rank(self);
      if (from < 0)
        return refused_call(self);
      return accept_call(self, from, kind, std::move(group), std::move(key), std::move(name),
                         std::move(type), std::move(payload));
    },
    [self](group_atom, std::string& what, wire_bytes& ranks, std::int32_t rank) -> reply_result {
      const handling scope{self};
      if (rank != sender_rank(self))
        return failed_reply(reply_status::invalid_argument,
                            "a group request for rank " + std::to_string(rank) +
                              " must come from that member");
      auto promise = self->make_response_promise<std::uint8_t, std::string, wire_bytes>();
      try {
        self->state.groups.arrive(what, deserialize<std::vector<int>>(from_wire(ranks)), rank,
                                  promise);
      } catch (const serialization_error& e) {
        promise.deliver(static_cast<std::uint8_t>(reply_status::serialization_error),
                        std::string{e.what()}, wire_bytes{});
      }
      return promise;
    },
    [self](key_atom, std::uint8_t op, std::uint8_t table, std::string& group, std::string& key,
           std::int32_t rank) -> reply_result {
      const handling scope{self};
      if (rank != sender_rank(self))
        return failed_reply(reply_status::invalid_argument,
                            "a key request for rank " + std::to_string(rank) +
                              " must come from that member");
      auto reply = self->state.groups.keys(static_cast<key_operation>(op),
                                           static_cast<key_table>(table), group, key, rank);
      if (static_cast<key_operation>(op) == key_operation::remove &&
          static_cast<key_table>(table) == key_table::services)
        tell_withdrawn(self, group, key);
      return reply;
    },
    [self](withdrawn_atom, std::string& group, std::string& key) {
      const handling scope{self};
      if (sender_rank(self) != 0)
        return;
      self->state.core->service_owners.forget(group, key);
    },
  };
}

} // namespace

caf::actor spawn_member(world_core& core) {
  tsan_release(&core);
  return core.rt.system->spawn(member, &core);
}

} // namespace troupe::detail
