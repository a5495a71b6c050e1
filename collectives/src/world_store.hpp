// gloo's rendezvous store kept by a troupe world, so gloo needs no shared file
// system or server of its own: each member pairs the values it sets in an
// internal rpc group, whose key table rank 0 keeps (machin's LUT manager), and
// the others fetch them from it.
#pragma once

#include "troupe/world/rpc_group.hpp"

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace troupe::detail {

class world_store : public gloo::rendezvous::Store {
public:
  using clock = std::chrono::steady_clock;

  /// Every wait ends by `deadline` (the group's creation has one, whatever gloo asks for);
  /// while waiting, `check_members` throws peer_lost when a member the store waits on is gone.
  world_store(rpc_group group, clock::time_point deadline, std::function<void()> check_members)
    : group_(std::move(group)), deadline_(deadline), check_members_(std::move(check_members)) {}

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  /// timeout_error naming the first key still missing.
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

  /// Once every member is connected: meets them, then leaves the group, so that
  /// no member withdraws its keys while another still reads them.
  void close();

private:
  std::chrono::milliseconds left() const;

  rpc_group group_;
  clock::time_point deadline_;
  std::function<void()> check_members_;
};

} // namespace troupe::detail
