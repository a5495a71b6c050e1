// An etcd cluster for a test: real `etcd` servers (Debian's etcd-server) on loopback or on the
// addresses of namespace hosts, their data on tmpfs, ended (and their data removed) when the
// object goes, whatever happened. Each server dies with the test process too (PDEATHSIG).
#pragma once

#include "store/store_address.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace troupe::testing {

struct etcd_tls {
  std::string certificate; // the servers' (it must name every server's host)
  std::string key;
  std::string ca_file; // the CA clients' certificates must come from
};

class etcd_servers {
public:
  /// Whether `etcd` is on the PATH; where not, tests skip with a message.
  static bool installed();

  /// Starts `count` servers on `host` (free ports) as one cluster, and waits (up to 20 s) until
  /// it answers. Throws std::runtime_error if it does not.
  explicit etcd_servers(int count = 1, std::string host = "127.0.0.1",
                        std::optional<etcd_tls> tls = std::nullopt);
  ~etcd_servers();
  etcd_servers(const etcd_servers&) = delete;
  etcd_servers& operator=(const etcd_servers&) = delete;

  /// "etcd://host:port,..." for world_options::store.
  std::string address() const;
  std::vector<detail::store_endpoint> endpoints() const;
  /// "etcd://host:port/world" naming server `index` only.
  std::string address_of(int index, const std::string& world) const;
  /// Requests the servers have started, by gRPC method (Range, Put, Txn, DeleteRange,
  /// LeaseGrant, LeaseKeepAlive, Watch, ...), summed over the servers answering now: what etcd's
  /// own metrics say (plain HTTP clusters only).
  std::map<std::string, double> requests_started() const;
  /// SIGKILLs server `index` (its data stays, for restart()).
  void kill(int index);
  /// Starts server `index` again on its data and ports.
  void restart(int index);
  /// Stops server `index` (SIGSTOP) and returns once it is stopped: its connections stay open,
  /// and nothing answers on them.
  void pause(int index);
  /// Lets a paused server `index` go on (SIGCONT).
  void resume(int index);

private:
  struct server {
    std::string name;
    std::uint16_t client_port = 0;
    std::uint16_t peer_port = 0;
    pid_t pid = -1;
  };
  void launch(int index, bool fresh);
  /// Kills every server and removes their data.
  void end();
  void wait_until_answering(std::chrono::seconds limit) const;

  std::string host_;
  std::optional<etcd_tls> tls_;
  std::string folder_;
  std::vector<server> servers_;
};

} // namespace troupe::testing
