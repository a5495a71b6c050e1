// Devices by member: each member's world_options::devices, learnt when the world formed, named
// "device@member" so that one name says where an actor placed by device goes.
#include "group_state.hpp"

#include "troupe/actors/error.hpp"

#include <algorithm>

namespace troupe::detail {

namespace {

std::string listed(const std::vector<std::string>& names) {
  std::string all;
  for (const auto& name : names)
    all += (all.empty() ? "" : ", ") + name;
  return all;
}

} // namespace

std::vector<std::string> group_devices(const group_state& group) {
  const auto& core = group.live_core();
  std::vector<std::string> all;
  for (const auto& member : group.names_now())
    if (const auto rank = group.rank_of(member))
      for (const auto& device : core.members.devices(*rank))
        all.push_back(device + "@" + member);
  std::sort(all.begin(), all.end());
  return all;
}

int device_member(const group_state& group, std::string_view device) {
  const auto at = device.find('@');
  const auto name = device.substr(0, at);
  const auto member = at == std::string_view::npos ? std::string_view{} : device.substr(at + 1);
  const auto& core = group.live_core();
  const auto held = group.rank_of(member);
  if (at != std::string_view::npos && held) {
    const auto own = core.members.devices(*held);
    if (std::find(own.begin(), own.end(), name) != own.end())
      return *held;
  }
  throw invalid_argument("on_device: no member of rpc group '" + group.name + "' offers '" +
                         std::string{device} + "'" +
                         (at == std::string_view::npos ? " (write \"device@member\")" : "") +
                         "; it offers " + listed(group_devices(group)));
}

} // namespace troupe::detail
