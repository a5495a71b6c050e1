#include "roster.hpp"

#include <tuple>

namespace troupe::detail {

// Encoded and decoded as the same tuple of values: the bytes name the type they hold.
using roster_tuple = std::tuple<std::vector<std::string>, std::vector<std::string>,
                                std::vector<std::uint16_t>, std::vector<std::vector<std::string>>,
                                std::vector<std::uint8_t>, std::string, std::uint32_t>;
using join_details_tuple = std::tuple<std::vector<std::string>, std::int32_t>;

std::vector<std::byte> encode_roster(const roster& members) {
  return serialize(roster_tuple{members.names, members.hosts, members.ports, members.devices,
                                members.gone, members.world_id, members.incarnation});
}

roster read_roster(std::span<const std::byte> bytes, int capacity) {
  auto [names, hosts, ports, devices, gone, id, incarnation] = deserialize<roster_tuple>(bytes);
  const auto size = static_cast<std::size_t>(capacity);
  if (names.size() != size || hosts.size() != size || ports.size() != size ||
      devices.size() != size || gone.size() != size)
    throw serialization_error(
      "world: rank 0's roster lists " + std::to_string(names.size()) + " names, " +
      std::to_string(hosts.size()) + " hosts, " + std::to_string(ports.size()) + " ports, " +
      std::to_string(devices.size()) + " device lists and " + std::to_string(gone.size()) +
      " gone flags for a world of up to " + std::to_string(size) + " members");
  for (const auto flag : gone)
    if (flag > static_cast<std::uint8_t>(gone_as::left))
      throw serialization_error("world: rank 0's roster says a member is gone as " +
                                std::to_string(flag) + ", which means nothing");
  return {std::move(names), std::move(hosts), std::move(ports), std::move(devices),
          std::move(gone),  std::move(id),    incarnation};
}

std::vector<std::byte> encode_join_details(const join_details& details) {
  return serialize(join_details_tuple{details.devices, details.max_world_size});
}

join_details read_join_details(std::span<const std::byte> bytes) {
  auto [devices, max_world_size] = deserialize<join_details_tuple>(bytes);
  return {std::move(devices), max_world_size};
}

} // namespace troupe::detail
