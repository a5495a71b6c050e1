// What rpc_group's actor templates call: spawning an actor of a registered type on a member,
// finding one by name, and choosing the member that runs the fewest or offers a device.
#pragma once

#include "troupe/actors/actor.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::detail {

class group_state;

/// Makes an actor of registered type `type` from `constructor` on the member of world rank
/// `rank`, named options.name in the group; the core of the spawner's handle, which restarts it
/// as options.restart allows when that member is lost.
std::shared_ptr<actor_core> spawn_on_member(const std::shared_ptr<group_state>& group, int rank,
                                            actor_options options, std::string type,
                                            std::vector<std::byte> constructor);
/// The actor named `name` in the group, wherever it runs; key_error if none, invalid_argument
/// if it is of another type.
std::shared_ptr<actor_core> find_actor(const std::shared_ptr<group_state>& group,
                                       const std::string& name, std::string type);
/// The world rank of the group's member that runs the fewest actors (the lowest rank of those
/// tied), asking each; members lost are passed over.
int least_loaded_member(group_state& group);
/// The world rank of the group's member that offers `device` ("device@member");
/// invalid_argument naming it, and what the group offers, if none does.
int device_member(const group_state& group, std::string_view device);
/// Every device the group's members offer, as "device@member", sorted.
std::vector<std::string> group_devices(const group_state& group);

} // namespace troupe::detail
