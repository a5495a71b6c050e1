// gloo's rendezvous store kept by a troupe world, so gloo needs no shared file
// system or server of its own: each member pairs the values it sets in an
// internal rpc group, whose key table rank 0 keeps (machin's LUT manager), and
// the others fetch them from it.
#pragma once

#include "troupe/distributed/rpc_group.hpp"

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <string>
#include <vector>

namespace troupe::detail {

class world_store : public gloo::rendezvous::Store {
public:
  world_store(rpc_group group, std::chrono::milliseconds timeout)
    : group_(std::move(group)), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  /// timeout_error naming the first key still missing.
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

  /// Once every member is connected: meets them, then leaves the group, so that
  /// no member withdraws its keys while another still reads them.
  void close();

private:
  rpc_group group_;
  std::chrono::milliseconds timeout_;
};

} // namespace troupe::detail
