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

store_location parse_store_location(std::string_view address) {
  constexpr std::size_t longest_name = 64;
  const auto slash = address.find('/', scheme.size());
  store_location where{parse_store_address(address.substr(0, slash)),
                       std::string{default_store_world}};
  if (slash == std::string_view::npos)
    return where;
  const auto name = address.substr(slash + 1);
  const bool fits = !name.empty() && name.size() <= longest_name &&
                    name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789._-") == std::string_view::npos;
  if (!fits)
    malformed(address, "the world's name '" + std::string{name.substr(0, longest_name)} +
                         "' must be 1 to 64 letters, digits, '.', '_' or '-'");
  where.world = name;
  return where;
}

} // namespace troupe::detail
