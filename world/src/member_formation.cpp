// Forming the world: on rank 0, every member asks to join; once all have (and the address of
// each is known), each is told the roster and adopted as a peer. A rank or name claimed twice
// fails the claimants. A member takes the roster rank 0 tells it.
#include "member_handlers.hpp"

#include "troupe/actors/annotated.hpp"
#include "troupe/actors/serialization.hpp"

#include <caf/io/middleman.hpp>

namespace troupe::detail {

namespace {

/// Rank 0: `rank` may join the forming world unless its rank or name is taken.
std::optional<std::string> join_refusal(member_actor* self, const std::string& name, int rank) {
  auto& st = self->state;
  const auto& options = st.core->options;
  if (name == options.name)
    return "the name '" + name + "' is claimed by rank 0 and rank " + std::to_string(rank);
  for (const auto& [other, join] : st.joins)
    if (join.name == name)
      return "the name '" + name + "' is claimed by rank " + std::to_string(other) + " and rank " +
             std::to_string(rank);
  return std::nullopt;
}

/// Rank 0, once every member has joined: tells each the roster and adopts them as peers, then
/// takes in the members that asked to join the formed world meanwhile.
void complete_formation(member_actor* self) {
  auto& st = self->state;
  const auto& options = st.core->options;
  st.core->members.add(0, options.name, options.devices);
  for (const auto& [rank, join] : st.joins) {
    st.core->members.add(rank, join.name, join.devices);
    st.addresses[static_cast<std::size_t>(rank)] = endpoint{join.host, join.port};
  }
  const auto roster = roster_now(self);
  st.roster_known = true;
  auto joins = std::move(st.joins);
  st.joins.clear();
  for (auto& [rank, join] : joins) {
    deliver(join.promise, {}, roster);
    add_peer(self, rank, join.handle);
  }
  take_in_waiting(self);
}

/// Rank 0: a rank claimed twice while the world forms fails both claimants and the formation,
/// since one of them is not who it says (without a secret, any local process can claim).
reply_result refuse_both(member_actor* self, std::map<int, pending_join>::iterator first,
                         const std::string& second) {
  const auto why = "world: rank " + std::to_string(first->first) + " is claimed by both '" +
                   first->second.name + "' and '" + second + "'";
  deliver(first->second.promise, failure::of<invalid_argument>(why));
  self->state.joins.erase(first);
  self->state.core->formation_failed(std::make_exception_ptr(invalid_argument(why)));
  return failed_reply(failure::of<invalid_argument>(why));
}

/// Rank 0: tells the roster once every member has joined and every address is known.
void complete_when_whole(member_actor* self) {
  auto& st = self->state;
  if (st.unknown_addresses == 0 &&
      st.joins.size() + 1 == static_cast<std::size_t>(st.core->options.world_size))
    complete_formation(self);
}

/// Rank 0: why a join must be refused at the door, before its claims are weighed: a member of
/// another troupe build, one whose connection proved another name than it claims, or one that
/// expects another world.
std::optional<std::string> door_refusal(member_actor* self, const join_fields& join,
                                        const join_details& details) {
  const auto& options = self->state.core->options;
  if (auto other = other_world_refusal(self, join.name, join.size, details.max_world_size))
    return other;
  if (join.rank <= 0 || join.rank >= options.max_world_size)
    return "world: '" + join.name + "' asks for rank " + std::to_string(join.rank) +
           ", outside 1.." + std::to_string(options.max_world_size - 1);
  return std::nullopt;
}

/// Rank 0: a member asks to join the forming world; answered once the whole world has.
reply_result accept_join(member_actor* self, join_fields& join, join_details& details) {
  auto& st = self->state;
  const auto rank = join.rank;
  const auto& name = join.name;
  if (auto at = st.joins.find(rank); at != st.joins.end())
    return refuse_both(self, at, name);
  if (auto refusal = join_refusal(self, name, rank))
    return failed_reply(failure::of<invalid_argument>("world: " + *refusal));
  auto promise = self->make_response_promise<std::uint8_t, std::string, wire_bytes>();
  st.core->joined(rank, name, join.handle.node());
  st.joins.emplace(rank, pending_join{name, join.host, join.port, std::move(details.devices),
                                      join.handle, promise});
  if (join.host.empty()) {
    // The roster waits for every such address, or a member would be told to reach an empty host.
    ++st.unknown_addresses;
    look_up_host(
      self, rank, join.handle.node(),
      [self, rank](std::string address) {
        --self->state.unknown_addresses;
        if (auto at = self->state.joins.find(rank); at != self->state.joins.end())
          at->second.host = std::move(address);
        complete_when_whole(self);
      },
      [self](network_error why) {
        --self->state.unknown_addresses;
        self->state.core->formation_failed(std::make_exception_ptr(std::move(why)));
      });
    return promise;
  }
  complete_when_whole(self);
  return promise;
}

} // namespace

void look_up_host(member_actor* self, int rank, const caf::node_id& node,
                  std::function<void(std::string)> found,
                  std::function<void(network_error)> failed) {
  self
    ->request(self->state.core->rt.system->middleman().actor_handle(), std::chrono::seconds{10},
              caf::get_atom::value, node)
    .then(
      [self, found](const caf::node_id&, std::string& address, std::uint16_t) {
        const handling scope{self};
        found(std::move(address));
      },
      [self, rank, failed](caf::error& e) {
        const handling scope{self};
        failed(network_error("world: the address of rank " + std::to_string(rank) +
                             " is unknown: " + to_string(e)));
      });
}

std::optional<std::string> stranger_refusal(member_actor* self, std::uint32_t version,
                                            const std::string& name) {
  if (version != wire_version)
    return "world: '" + name + "' speaks troupe's wire version " + std::to_string(version) +
           ", rank 0 version " + std::to_string(wire_version) +
           ": every member must run the same troupe";
  const auto proven = proven_name(self);
  if (!proven || *proven != name)
    return "world: a join claims the name '" + name + "' but its connection proved " +
           (proven ? "'" + *proven + "'" : "no name");
  return std::nullopt;
}

std::optional<std::string> other_world_refusal(member_actor* self, const std::string& name,
                                               int size, int max_size) {
  const auto& options = self->state.core->options;
  if (size == options.world_size && max_size == options.max_world_size)
    return std::nullopt;
  return "world: '" + name + "' expects a world of " + std::to_string(size) +
         " members and at most " + std::to_string(max_size) + ", rank 0 (" + options.name +
         ") one of " + std::to_string(options.world_size) + " and at most " +
         std::to_string(options.max_world_size);
}

wire_bytes roster_now(member_actor* self, std::uint32_t incarnation) {
  auto& st = self->state;
  roster members{st.core->members.names(), {}, {}, {}, {}, st.core->world_id, incarnation};
  for (std::size_t rank = 0; rank < members.names.size(); ++rank) {
    members.hosts.push_back(st.addresses[rank].host);
    members.ports.push_back(st.addresses[rank].port);
    members.devices.push_back(st.core->members.devices(static_cast<int>(rank)));
    members.gone.push_back(static_cast<std::uint8_t>(
      !st.lost[rank] ? gone_as::present : (st.left[rank] ? gone_as::left : gone_as::lost)));
  }
  return to_wire(encode_roster(members));
}

std::optional<std::vector<std::string>>
checked_devices(const std::string& name, std::vector<std::string> devices, std::string& why) {
  try {
    check_devices(devices, "the devices of '" + name + "'");
    return devices;
  } catch (const invalid_argument& e) {
    why = std::string{"world: "} + e.what();
  }
  return std::nullopt;
}

reply_result on_join(member_actor* self, join_fields join) {
  if (self->state.core->with_store())
    return failed_reply(failure::of<state_error>(
      "this world keeps its members in its store: a member joins through the store"));
  if (self->state.core->options.rank != 0)
    return failed_reply(failure::of<state_error>("only rank 0 accepts joins"));
  if (auto refusal = stranger_refusal(self, join.version, join.name))
    return failed_reply(failure::of<invalid_argument>(std::move(*refusal)));
  join_details details;
  try {
    details = read_join_details(from_wire(join.details));
  } catch (const std::exception& e) {
    return failed_reply(failure::of<invalid_argument>(
      "world: the details of '" + join.name + "' (its devices) do not decode: " + e.what()));
  }
  std::string why;
  auto devices = checked_devices(join.name, std::move(details.devices), why);
  if (!devices)
    return failed_reply(failure::of<invalid_argument>(why));
  details.devices = std::move(*devices);
  if (auto refusal = door_refusal(self, join, details))
    return failed_reply(failure::of<invalid_argument>(std::move(*refusal)));
  if (join.rank >= self->state.core->options.world_size || self->state.roster_known)
    return accept_late_join(self, join, details);
  return accept_join(self, join, details);
}

void on_roster(member_actor* self, roster_adoption& roster) {
  auto& st = self->state;
  st.core->members.adopt(roster.names, roster.devices);
  for (std::size_t rank = 0; rank < roster.hosts.size(); ++rank)
    st.addresses[rank] = endpoint{roster.hosts[rank], roster.ports[rank]};
  for (std::size_t rank = 0; rank < roster.gone.size(); ++rank)
    if (const auto how = static_cast<gone_as>(roster.gone[rank]); how != gone_as::present) {
      st.lost[rank] = true; // before this member joined: nothing here waits on it
      st.left[rank] = how == gone_as::left;
      st.core->mark_gone(static_cast<int>(rank), how == gone_as::left);
    }
  st.roster_known = true;
  check_ready(self);
  if (st.core->options.rank == 0) // a world of one: formed at once
    take_in_waiting(self);
}

void on_early_peer(member_actor* self, early_peer& peer) {
  add_peer(self, peer.rank, std::move(peer.handle));
}

} // namespace troupe::detail
