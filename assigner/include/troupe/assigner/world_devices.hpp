// The devices of a world's members, ready for troupe::assign, each named "device@member": the
// name rpc_group::spawn places an actor by, so a module's actor goes where the assigner put it.
//
//   auto devices = troupe::world_devices(group);        // "cpu@rank-0", "cuda:0@rank-1", ...
//   auto plan = troupe::assign(modules, devices, flows);
//   for (std::size_t i = 0; i < modules.size(); ++i)
//     stages.push_back(group.spawn<stage>(troupe::on_device{plan.device_name[i]},
//                                         {.name = modules[i].name}, plan.device_name[i]));
//
// Each member describes the devices it offers (world_options::devices) as local_devices() sees
// them on its host: a GPU's free memory and idle share, a CPU's available memory. Its program
// must link troupe::assigner_world too (it answers through a task registered there).
#pragma once

#include "troupe/assigner/specs.hpp"
#include "troupe/world/rpc_group.hpp"

#include <vector>

namespace troupe {

/// Every device the group's members offer, in rpc_group::devices() order. invalid_argument
/// naming the member and device when a member offers a device its host does not have;
/// peer_lost or timeout_error (the world's timeout) when a member does not answer.
std::vector<device_spec> world_devices(rpc_group& group);

} // namespace troupe
