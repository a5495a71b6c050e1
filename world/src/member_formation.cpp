// Forming the world: on rank 0, every member asks to join; once all have (and the address of
// each is known), each is told the roster and adopted as a peer. A rank or name claimed twice
// fails the claimants. A member takes the roster rank 0 tells it.
#include "member_handlers.hpp"

#include "troupe/actors/annotated.hpp"
#include "troupe/actors/serialization.hpp"

#include <caf/io/middleman.hpp>

namespace troupe::detail {

namespace {

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
      return "the name '" + name + "' is claimed by rank " + std::to_string(other) + " and rank " +
             std::to_string(rank);
  return std::nullopt;
}

/// Rank 0, once every member has joined: tells each the roster and adopts them as peers.
void complete_formation(member_actor* self) {
  auto& st = self->state;
  const auto& options = st.core->options;
  std::vector<std::string> names(static_cast<std::size_t>(options.world_size));
  std::vector<std::string> hosts(names.size());
  std::vector<std::uint16_t> ports(names.size());
  std::vector<std::vector<std::string>> devices(names.size());
  names[0] = options.name;
  devices[0] = options.devices;
  for (const auto& [rank, join] : st.joins) {
    const auto at = static_cast<std::size_t>(rank);
    names[at] = join.name;
    hosts[at] = join.host;
    ports[at] = join.port;
    devices[at] = join.devices;
  }
  st.core->names = names;
  st.core->devices = devices;
  const auto roster =
    to_wire(serialize(std::tuple{names, hosts, ports, devices, st.core->world_id}));
  st.roster_known = true;
  auto joins = std::move(st.joins);
  st.joins.clear();
  for (auto& [rank, join] : joins) {
    deliver(join.promise, {}, roster);
    add_peer(self, rank, join.handle);
  }
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

/// A joining member's devices, decoded and checked; nullopt (and `why`) if they are no list.
std::optional<std::vector<std::string>>
joined_devices(const std::string& name, const wire_bytes& encoded, std::string& why) {
  const auto whose = "the devices of '" + name + "'";
  try {
    auto devices = deserialize<std::vector<std::string>>(as_bytes(encoded));
    check_devices(devices, whose);
    return devices;
  } catch (const invalid_argument& e) {
    why = std::string{"world: "} + e.what();
  } catch (const std::exception& e) {
    why = "world: " + whose + " do not decode: " + e.what();
  }
  return std::nullopt;
}

/// Rank 0: why a join must be refused at the door, before its claims are weighed: a member of
/// another troupe build, or one whose connection proved another name than it claims.
std::optional<std::string> door_refusal(member_actor* self, const join_fields& join) {
  if (join.version != wire_version)
    return "world: '" + join.name + "' speaks troupe's wire version " +
           std::to_string(join.version) + ", rank 0 version " + std::to_string(wire_version) +
           ": every member must run the same troupe";
  const auto proven = proven_name(self);
  if (!proven || *proven != join.name)
    return "world: a join claims the name '" + join.name + "' but its connection proved " +
           (proven ? "'" + *proven + "'" : "no name");
  return std::nullopt;
}

/// Rank 0: a member at the door asks to join; answered once the whole world has.
/// `devices`: the joining member's, encoded (refused unless they are a valid list).
reply_result accept_join(member_actor* self, std::string name, int rank, int size,
                         std::uint16_t port, std::string host, caf::actor handle,
                         const wire_bytes& encoded_devices) {
  auto& st = self->state;
  if (st.roster_known) {
    const auto& names = st.core->names;
    const bool held = rank > 0 && static_cast<std::size_t>(rank) < names.size();
    return failed_reply(failure::of<invalid_argument>(
      "world: the world has formed already; '" + name + "' is too late" +
      (held ? ": rank " + std::to_string(rank) + " is held by '" +
                names[static_cast<std::size_t>(rank)] + "'"
            : std::string{})));
  }
  if (auto at = st.joins.find(rank); at != st.joins.end())
    return refuse_both(self, at, name);
  if (auto refusal = join_refusal(self, name, rank, size))
    return failed_reply(failure::of<invalid_argument>("world: " + *refusal));
  std::string why;
  auto devices = joined_devices(name, encoded_devices, why);
  if (!devices)
    return failed_reply(failure::of<invalid_argument>(why));
  auto promise = self->make_response_promise<std::uint8_t, std::string, wire_bytes>();
  st.core->joined(rank, name, handle.node());
  st.joins.emplace(rank, pending_join{name, host, port, std::move(*devices), handle, promise});
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
          self->state.core->formation_failed(std::make_exception_ptr(
            network_error("world: the address of rank " + std::to_string(rank) +
                          " is unknown: " + to_string(e))));
        });
    return promise;
  }
  complete_when_whole(self);
  return promise;
}

} // namespace

reply_result on_join(member_actor* self, join_fields join) {
  if (self->state.core->options.rank != 0)
    return failed_reply(failure::of<state_error>("only rank 0 accepts joins"));
  if (auto refusal = door_refusal(self, join))
    return failed_reply(failure::of<invalid_argument>(std::move(*refusal)));
  return accept_join(self, std::move(join.name), join.rank, join.size, join.port,
                     std::move(join.host), std::move(join.handle), join.devices);
}

void on_roster(member_actor* self, roster_adoption& roster) {
  auto& st = self->state;
  st.core->names = roster.names;
  st.core->devices = roster.devices;
  for (std::size_t rank = 0; rank < roster.hosts.size(); ++rank)
    st.addresses[rank] = endpoint{roster.hosts[rank], roster.ports[rank]};
  st.roster_known = true;
  check_ready(self);
}

void on_early_peer(member_actor* self, early_peer& peer) {
  add_peer(self, peer.rank, std::move(peer.handle));
}

} // namespace troupe::detail
