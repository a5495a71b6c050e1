#include "gloo_address.hpp"

#include "world_core.hpp"

#include "troupe/actors/error.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstdlib>
#include <memory>

namespace troupe::detail {

namespace {

bool is_address(const std::string& text) {
  in_addr v4{};
  in6_addr v6{};
  return ::inet_pton(AF_INET, text.c_str(), &v4) == 1 ||
         ::inet_pton(AF_INET6, text.c_str(), &v6) == 1;
}

/// The IPv4 address of interface `name` (IPv6 if it has none); invalid_argument listing the
/// host's interfaces when there is no such interface, or it has no address.
std::string address_of_interface(const std::string& name, const std::string& source) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0)
    throw network_error("collective group: cannot list this host's interfaces");
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owned{list, ::freeifaddrs};
  std::string v6, names;
  for (auto* each = list; each; each = each->ifa_next) {
    if (!each->ifa_addr)
      continue;
    if (names.find(std::string{" "} + each->ifa_name + ",") == std::string::npos)
      names += std::string{" "} + each->ifa_name + ",";
    if (name != each->ifa_name)
      continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (each->ifa_addr->sa_family == AF_INET) {
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(each->ifa_addr)->sin_addr, text,
                  sizeof text);
      return text;
    }
    if (each->ifa_addr->sa_family == AF_INET6 && v6.empty()) {
      ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(each->ifa_addr)->sin6_addr, text,
                  sizeof text);
      v6 = text;
    }
  }
  if (!v6.empty())
    return v6;
  if (!names.empty())
    names.pop_back();
  throw invalid_argument("collective group: " + source + " names interface '" + name +
                         "', which this host does not have with an address (it has:" + names + ")");
}

/// The user's choice: an interface name or an address, from the options or the environment.
std::string chosen_address(const collective_options& options) {
  std::string choice = options.interface, source = "collective_options::interface";
  if (choice.empty()) {
    const char* variable = std::getenv("TROUPE_SOCKET_IFNAME");
    if (!variable || !*variable)
      return {};
    choice = variable;
    source = "TROUPE_SOCKET_IFNAME";
  }
  return is_address(choice) ? choice : address_of_interface(choice, source);
}

} // namespace

std::string gloo_address(world_core& world, const collective_options& options) {
  const auto loopback = world.loopback_host();
  const bool world_on_loopback = !loopback.empty();
  auto address = chosen_address(options);
  if (address.empty())
    address = world_on_loopback ? loopback : world.address_seen_by_others();
  if (!world_on_loopback && (address.empty() || is_loopback(address)))
    throw invalid_argument(
      "collective group: this member would advertise '" + address +
      "' to members on other hosts, who cannot reach it there: name the interface they reach "
      "it on with collective_options::interface or TROUPE_SOCKET_IFNAME");
  return address;
}

} // namespace troupe::detail
