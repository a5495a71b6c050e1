// A world's devices: each member is asked for its own (a task run there), since only its host
// can see their memory and load.
#include "troupe/assigner/world_devices.hpp"

#include "troupe/actors/task.hpp"
#include "troupe/assigner/devices.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace troupe {

/// How a device_spec travels.
template <class Archive>
void serialize(Archive& ar, device_spec& device) {
  ar(device.name, device.kind, device.memory_capacity_bytes, device.compute_power);
}

namespace {

/// What this host has of `names`, in that order; invalid_argument for one it lacks.
std::vector<device_spec> describe_devices(const std::vector<std::string>& names) {
  const auto local = local_devices();
  std::vector<device_spec> found;
  for (const auto& name : names) {
    const auto at = std::find_if(local.begin(), local.end(),
                                 [&](const device_spec& device) { return device.name == name; });
    if (at == local.end()) {
      std::string has;
      for (const auto& device : local)
        has += (has.empty() ? "" : ", ") + device.name;
      throw invalid_argument("this member offers device '" + name +
                             "' (world_options::devices), which its host does not have (it has " +
                             has + ")");
    }
    found.push_back(*at);
  }
  return found;
}

} // namespace

// Registered where world_devices is linked: in the programs of the members it asks.
TROUPE_TASK(troupe_assigner_describe_devices,
            [](const std::vector<std::string>& names) { return describe_devices(names); });

std::vector<device_spec> world_devices(rpc_group& group) {
  // "device@member" names, by member.
  std::map<std::string, std::vector<std::string>> offered;
  const auto names = group.devices();
  for (const auto& name : names) {
    const auto at = name.find('@');
    offered[name.substr(at + 1)].push_back(name.substr(0, at));
  }
  std::map<std::string, async_result<std::vector<device_spec>>> asked;
  for (const auto& [member, devices] : offered)
    asked.emplace(member, group.rpc_async(member, troupe_assigner_describe_devices, devices));
  std::map<std::string, device_spec> described;
  for (auto& [member, answer] : asked) {
    std::vector<device_spec> devices;
    try {
      devices = answer.get();
    } catch (const invalid_argument& e) {
      throw invalid_argument("world_devices: member '" + member + "': " + e.what());
    }
    for (auto& device : devices) {
      device.name += "@" + member;
      described.emplace(device.name, std::move(device));
    }
  }
  std::vector<device_spec> all;
  for (const auto& name : names)
    all.push_back(std::move(described.at(name)));
  return all;
}

} // namespace troupe
