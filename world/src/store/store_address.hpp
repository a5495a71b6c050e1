// Where a world keeps its tables: world_options::store ("etcd://host:port,host:port/name"), read
// into the etcd servers a member talks to and the world's name there. Empty: rank 0 keeps the
// tables (no store).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::detail {

/// One etcd server's client address.
struct store_endpoint {
  std::string host;
  std::uint16_t port = 0;

  /// "host:port", as messages name it.
  std::string text() const;
  friend bool operator==(const store_endpoint&, const store_endpoint&) = default;
};

/// The servers of "etcd://host:port[,host:port...]" in the order given (a member tries them in
/// that order and stays with the first that answers). Throws invalid_argument naming what is
/// wrong: another scheme, no server, a server without a port, a port out of range, more than 16
/// servers (an etcd cluster has 3 or 5). IPv6 addresses go in brackets: "etcd://[::1]:2379".
std::vector<store_endpoint> parse_store_address(std::string_view address);

/// A world's store: its servers, and the world's name there (its keys' prefix).
struct store_location {
  std::vector<store_endpoint> servers;
  std::string world;
};

/// The name of a world whose store address names none.
inline constexpr std::string_view default_store_world = "troupe";

/// "etcd://host:port[,host:port...][/name]" read: the servers as parse_store_address reads
/// them, and the name (1 to 64 letters, digits, '.', '_' or '-'; default_store_world if none).
/// Throws invalid_argument naming what is wrong.
store_location parse_store_location(std::string_view address);

} // namespace troupe::detail
