#include "roster.hpp"

#include "troupe/actors/serialization.hpp"

#include <tuple>

namespace troupe::detail {

roster read_roster(std::span<const std::byte> bytes, int world_size) {
  auto [names, hosts, ports, devices, id] = deserialize<
    std::tuple<std::vector<std::string>, std::vector<std::string>, std::vector<std::uint16_t>,
               std::vector<std::vector<std::string>>, std::string>>(bytes);
  const auto size = static_cast<std::size_t>(world_size);
  if (names.size() != size || hosts.size() != size || ports.size() != size ||
      devices.size() != size)
    throw serialization_error(
      "world: rank 0's roster lists " + std::to_string(names.size()) + " names, " +
      std::to_string(hosts.size()) + " hosts, " + std::to_string(ports.size()) + " ports and " +
      std::to_string(devices.size()) + " device lists for a world of " + std::to_string(size));
  return {std::move(names), std::move(hosts), std::move(ports), std::move(devices), std::move(id)};
}

} // namespace troupe::detail
