// Joining the formed world: a member of rank world_size or more asks rank 0 as the others did
// (the same door: its wire version, its proven name, its details); rank 0 waits until the world
// has formed, gives it the rank unless a member holds the rank or the name, tells every member
// there, and answers the joiner with the roster once they have all taken it in, so that none of
// them hears from it before knowing who it is. Every member's table then has it; it reaches
// the others as any higher rank does (member_peers.cpp). A member that was lost may join again
// under its name and rank, as a new process: every member resets what it knew of the rank and
// takes connections for it only from the new process. A member that asks for any rank gets
// the lowest free one first (on_reserve).
#include "member_handlers.hpp"

#include "troupe/actors/annotated.hpp"
#include "troupe/actors/serialization.hpp"

namespace troupe::detail {

namespace {

/// Whether `name` joining at `rank` is that member again, as a new process: it was lost (or
/// left), and a rank keeps its name.
bool returns(member_actor* self, const std::string& name, int rank) {
  const auto* holder = self->state.core->members.name(rank);
  return holder != nullptr && *holder == name && self->state.lost[static_cast<std::size_t>(rank)];
}

/// Rank 0: why the world cannot take `name` at `rank`, if it cannot: a rank or a name held by
/// another member, or by this one still in the world.
std::optional<std::string> held_refusal(member_actor* self, const std::string& name, int rank) {
  const auto& members = self->state.core->members;
  const bool again = returns(self, name, rank);
  if (const auto* holder = members.name(rank); holder != nullptr && !again)
    return "world: '" + name + "' asks for rank " + std::to_string(rank) + ", held by '" + *holder +
           "'" + (*holder == name ? ", who is still in the world" : "");
  if (const auto held = members.rank_of(name); held && *held != rank)
    return "world: the name '" + name + "' is held by rank " + std::to_string(*held);
  if (const auto at = self->state.reserved.find(rank);
      at != self->state.reserved.end() && at->second != name)
    return "world: '" + name + "' asks for rank " + std::to_string(rank) + ", held for '" +
           at->second + "' (who asked for any rank)";
  if (self->state.lost[0])
    return "world: rank 0 is leaving the world";
  return std::nullopt;
}

/// Rank 0: why a joiner cannot wait to be taken in: its rank or name is another joiner's now.
std::optional<std::string> joining_refusal(member_actor* self, const std::string& name, int rank) {
  for (const auto& [other, join] : self->state.late_joins)
    if (other == rank || join.name == name)
      return "world: '" + name + "' (rank " + std::to_string(rank) + ") and '" + join.name +
             "' (rank " + std::to_string(other) + ") are joining at once with the same " +
             (other == rank ? "rank" : "name");
  return held_refusal(self, name, rank);
}

/// Rank 0: every member there has learnt of the joiner of `rank` (or is gone): the joiner gets
/// the roster, and rank 0's own callbacks run.
void welcome(member_actor* self, int rank) {
  auto& st = self->state;
  auto at = st.late_joins.find(rank);
  if (at == st.late_joins.end())
    return;
  auto join = std::move(at->second);
  st.late_joins.erase(at);
  deliver(join.promise, {}, roster_now(self, 1 + st.incarnations[rank]));
  st.core->member_joined(join.name, rank);
}

/// Rank 0: tells every member there of the joiner of `rank`; welcomes it once all have answered.
void tell_every_member(member_actor* self, int rank, pending_join& join) {
  auto& st = self->state;
  const auto devices = to_wire(serialize(join.devices));
  for (std::size_t other = 1; other < st.peers.size(); ++other) {
    if (static_cast<int>(other) == rank || !st.peers[other] || st.lost[other])
      continue;
    ++join.unanswered;
    // Answered or not (a member that does not answer in time is being lost), it counts: the
    // joiner is not kept waiting for a member that is going.
    auto told = [self, rank] {
      if (auto waiting = self->state.late_joins.find(rank);
          waiting != self->state.late_joins.end() && --waiting->second.unanswered == 0)
        welcome(self, rank);
    };
    self
      ->request(st.peers[other], st.core->options.timeout,
                joined_message::make(static_cast<std::int32_t>(rank), join.name, devices, join.host,
                                     join.port, join.handle.node(), join.handle.id()))
      .then(
        [self, told](std::uint8_t, std::string&, wire_bytes&) {
          const handling scope{self};
          told();
        },
        [self, told](caf::error&) {
          const handling scope{self};
          told();
        });
  }
  if (join.unanswered == 0)
    welcome(self, rank);
}

/// Rank 0: takes the joiner of `rank` into the table (back, if it joins again) and tells every
/// member there of it.
void announce(member_actor* self, int rank) {
  auto& st = self->state;
  auto& join = st.late_joins.at(rank);
  st.reserved.erase(rank);
  if (returns(self, join.name, rank)) {
    take_back(self, rank, member_identity::of(join.handle));
    st.core->members.renew(rank, join.devices);
    ++st.incarnations[rank];
  } else {
    st.core->members.add(rank, join.name, join.devices);
    st.joined_as[rank] = member_identity::of(join.handle);
  }
  st.addresses[static_cast<std::size_t>(rank)] = endpoint{join.host, join.port};
  st.core->joined(rank, join.name, join.handle.node());
  add_peer(self, rank, join.handle);
  tell_every_member(self, rank, join);
}

/// Rank 0, formed: takes in the joiner of `rank`, once its address is known.
void take_in(member_actor* self, int rank) {
  auto& st = self->state;
  auto& join = st.late_joins.at(rank);
  if (auto refusal = held_refusal(self, join.name, rank)) {
    deliver(join.promise, failure::of<invalid_argument>(*refusal));
    st.late_joins.erase(rank);
    return;
  }
  if (!join.host.empty()) {
    announce(self, rank);
    return;
  }
  look_up_host(
    self, rank, join.handle.node(),
    [self, rank](std::string address) {
      if (auto at = self->state.late_joins.find(rank); at != self->state.late_joins.end()) {
        at->second.host = std::move(address);
        announce(self, rank);
      }
    },
    [self, rank](network_error why) {
      if (auto at = self->state.late_joins.find(rank); at != self->state.late_joins.end()) {
        deliver(at->second.promise, failure::of<network_error>(why.what()));
        self->state.late_joins.erase(at);
      }
    });
}

} // namespace

reply_result accept_late_join(member_actor* self, join_fields& join, join_details& details) {
  auto& st = self->state;
  if (auto refusal = joining_refusal(self, join.name, join.rank))
    return failed_reply(failure::of<invalid_argument>(std::move(*refusal)));
  auto promise = self->make_response_promise<std::uint8_t, std::string, wire_bytes>();
  const auto rank = join.rank;
  // Checked above: no other joiner holds the rank now.
  st.late_joins.emplace(rank, pending_join{std::move(join.name), std::move(join.host), join.port,
                                           std::move(details.devices), join.handle, promise});
  if (st.roster_known)
    take_in(self, rank);
  return promise;
}

void take_in_waiting(member_actor* self) {
  std::vector<int> waiting;
  for (const auto& [rank, join] : self->state.late_joins)
    if (join.unanswered == 0)
      waiting.push_back(rank);
  for (int rank : waiting)
    take_in(self, rank);
}

namespace {

/// Rank 0: the lowest rank from world_size up that no member holds, no joiner is taking and
/// none is held for; nullopt if the world is full.
std::optional<int> free_rank(member_actor* self) {
  auto& st = self->state;
  for (int rank = st.core->options.world_size; rank < st.core->options.max_world_size; ++rank)
    if (st.core->members.name(rank) == nullptr && !st.late_joins.contains(rank) &&
        !st.reserved.contains(rank))
      return rank;
  return std::nullopt;
}

} // namespace

reply_result on_reserve(member_actor* self, std::uint32_t version, std::string& name,
                        std::int32_t size, std::int32_t max_size) {
  auto& st = self->state;
  const auto& options = st.core->options;
  if (options.rank != 0 || st.core->with_store())
    return failed_reply(failure::of<state_error>("only rank 0 gives ranks, in a world without a "
                                                 "store"));
  auto refusal = stranger_refusal(self, version, name);
  if (!refusal)
    refusal = other_world_refusal(self, name, size, max_size);
  if (refusal)
    return failed_reply(failure::of<invalid_argument>(std::move(*refusal)));
  if (const auto held = st.core->members.rank_of(name))
    return failed_reply(failure::of<invalid_argument>(
      "world: the name '" + name + "' is held by rank " + std::to_string(*held)));
  for (const auto& [rank, holder] : st.reserved)
    if (holder == name) // asked again: the same rank
      return ok_reply(to_wire(serialize(static_cast<std::int32_t>(rank))));
  const auto rank = free_rank(self);
  if (!rank)
    return failed_reply(failure::of<invalid_argument>(
      "world: no rank is free for '" + name + "': the world has its most members (" +
      std::to_string(options.max_world_size) + ")"));
  st.reserved.emplace(*rank, name);
  self->delayed_send(self, options.timeout, reservation_expiry{*rank, name});
  return ok_reply(to_wire(serialize(static_cast<std::int32_t>(*rank))));
}

void on_reservation_expiry(member_actor* self, reservation_expiry& expiry) {
  auto& reserved = self->state.reserved;
  if (auto at = reserved.find(expiry.rank); at != reserved.end() && at->second == expiry.name)
    reserved.erase(at);
}

void take_back(member_actor* self, int rank, const member_identity& incarnation) {
  auto& st = self->state;
  const auto at = static_cast<std::size_t>(rank);
  st.lost[at] = false;
  st.left[at] = false;
  st.peers.reset(rank); // its old process's (whose end was handled when it was lost)
  st.connect_failures.erase(rank);
  st.greet_when_reached.erase(rank);
  st.joined_as[rank] = incarnation;
  st.groups.returned(rank);
  st.barriers.forget_creation_failures(); // a group that failed for want of it may be made now
  st.core->member_returned(rank);
}

reply_result on_joined(member_actor* self, joined_fields joined) {
  auto& st = self->state;
  const auto rank = joined.rank;
  const auto& name = joined.name;
  if (sender_rank(self) != 0 || st.core->with_store())
    return failed_reply(failure::of<state_error>(
      "only rank 0 says who joined the world (with a store, the store does)"));
  std::string why;
  std::optional<std::vector<std::string>> listed;
  try {
    listed =
      checked_devices(name, deserialize<std::vector<std::string>>(from_wire(joined.devices)), why);
  } catch (const std::exception& e) {
    why = "world: the devices of '" + name + "' do not decode: " + e.what();
  }
  if (!listed)
    return failed_reply(failure::of<invalid_argument>(why));
  const bool again = rank >= 0 && rank < st.core->members.capacity() && returns(self, name, rank);
  if (rank == st.core->options.rank ||
      (!again && !st.core->members.add(rank, name, std::move(*listed))))
    return failed_reply(failure::of<invalid_argument>("world: rank " + std::to_string(rank) +
                                                      " cannot be '" + name + "' here: it is " +
                                                      st.core->label(rank)));
  const member_identity incarnation{joined.node, joined.actor};
  if (again) {
    take_back(self, rank, incarnation);
    st.core->members.renew(rank, std::move(*listed));
  } else {
    st.joined_as[rank] = incarnation;
  }
  st.addresses[static_cast<std::size_t>(rank)] = endpoint{joined.host, joined.port};
  st.core->member_joined(name, rank);
  return ok_reply();
}

} // namespace troupe::detail
