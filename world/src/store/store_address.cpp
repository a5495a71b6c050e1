#include "store_address.hpp"

#include "troupe/actors/error.hpp"

#include <charconv>

namespace troupe::detail {

namespace {

constexpr std::string_view scheme = "etcd://";
/// An etcd cluster has 3 or 5 servers; more in one address is a mistake, and bounds the list.
constexpr std::size_t most_servers = 16;

[[noreturn]] void malformed(std::string_view address, const std::string& why) {
  throw invalid_argument("world_options::store '" + std::string{address} + "': " + why);
}

store_endpoint endpoint_of(std::string_view address, std::string_view server) {
  if (server.empty())
    malformed(address, "an empty server (two commas, or one at an end)");
  const auto colon = server.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == server.size())
    malformed(address, "server '" + std::string{server} + "' has no port (host:port)");
  std::string_view host = server.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty())
    malformed(address, "server '" + std::string{server} + "' has no host");
  const std::string_view port_text = server.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] =
    std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port == 0 || port > 65535)
    malformed(address, "server '" + std::string{server} + "' has port '" + std::string{port_text} +
                         "', not one of 1 to 65535");
  return {std::string{host}, static_cast<std::uint16_t>(port)};
}

} // namespace

std::string store_endpoint::text() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::vector<store_endpoint> parse_store_address(std::string_view address) {
  if (!address.starts_with(scheme))
    malformed(address, "must start with etcd:// (etcd://host:port,host:port,...)");
  std::string_view servers = address.substr(scheme.size());
  if (servers.empty())
    malformed(address, "names no server");
  std::vector<store_endpoint> endpoints;
  for (;;) {
    const auto comma = servers.find(',');
    if (endpoints.size() == most_servers)
      malformed(address, "names more than " + std::to_string(most_servers) + " servers");
    endpoints.push_back(endpoint_of(address, servers.substr(0, comma)));
    if (comma == std::string_view::npos)
      return endpoints;
    servers.remove_prefix(comma + 1);
  }
}

} // namespace troupe::detail
