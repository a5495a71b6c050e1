// Where a world keeps its tables: world_options::store ("etcd://host:port,host:port,..."), read
// into the etcd servers a member talks to. Empty: rank 0 keeps the tables (no store).
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

} // namespace troupe::detail
