// An rpc_group as this member holds it: its members, and the state of its barrier.
#pragma once

#include "coordinator.hpp"
#include "world_core.hpp"

#include "troupe/world/rpc_group.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace troupe::detail {

class group_state {
public:
  group_state(std::shared_ptr<world_core> world, std::string group, std::vector<std::string> names,
              std::vector<int> world_ranks)
    : core(std::move(world)), name(std::move(group)), members(std::move(names)),
      ranks(std::move(world_ranks)) {}

  /// state_error once destroyed here.
  world_core& live_core() const;

  std::shared_ptr<world_core> core;
  const std::string name;
  const std::vector<std::string> members; // sorted
  const std::vector<int> ranks; // their world ranks, in the same order
  std::atomic<bool> destroyed{false};

  std::atomic<std::uint64_t> barriers{0}; // calls of barrier() here so far (barrier_tree.hpp)
};

/// Creates the rpc group `name` of `members` on this member (world::create_rpc_group).
rpc_group create_group(const std::shared_ptr<world_core>& world, const std::string& name,
                       std::vector<std::string> members, std::chrono::milliseconds timeout);

/// The rendezvous name of a group's creation, at rank 0.
std::string creation_rendezvous(const std::string& group);

} // namespace troupe::detail
