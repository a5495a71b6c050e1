// An rpc_group as this member holds it: its members (a list, or every member the world has now),
// and the state of its barrier.
#pragma once

#include "coordinator.hpp"
#include "host_barrier.hpp"
#include "world_core.hpp"

#include "troupe/world/rpc_group.hpp"
#include "troupe/world/world.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::detail {

class group_state {
public:
  /// A group of the members `names` (sorted), of world ranks `world_ranks` in the same order.
  group_state(std::shared_ptr<world_core> world, std::string group, std::vector<std::string> names,
              std::vector<int> world_ranks)
    : core(std::move(world)), name(std::move(group)), members(std::move(names)),
      ranks(std::move(world_ranks)) {}
  /// A group of every member the world has, now and later (troupe::all_members).
  group_state(std::shared_ptr<world_core> world, std::string group, all_members_t)
    : core(std::move(world)), name(std::move(group)), follows_world(true) {}

  /// state_error once destroyed here.
  world_core& live_core() const;

  /// The members' names now, sorted: its list, or, following the world, its live members.
  std::vector<std::string> names_now() const;
  /// Their world ranks now: in the names' order for a list, in rank order following the world.
  std::vector<int> ranks_now() const;
  /// The world rank of member `member`, if it is one of the group's (following the world: any
  /// member it has had, gone or not).
  std::optional<int> rank_of(std::string_view member) const;

  std::shared_ptr<world_core> core;
  const std::string name;
  const bool follows_world = false;
  const std::vector<std::string> members; // sorted; empty following the world
  const std::vector<int> ranks; // their world ranks, in the same order
  std::atomic<bool> destroyed{false};

  std::atomic<std::uint64_t> barriers{0}; // calls of barrier() here so far (barrier_tree.hpp)
  /// Where its barriers meet when the whole world is on this host (host_barrier.hpp); null:
  /// along the tree.
  std::shared_ptr<host_barrier> on_host;
};

/// Creates the rpc group `name` of `members` on this member (world::create_rpc_group).
rpc_group create_group(const std::shared_ptr<world_core>& world, const std::string& name,
                       std::vector<std::string> members, std::chrono::milliseconds timeout);
/// Creates the rpc group `name` of every member the world has, now and later.
rpc_group create_group(const std::shared_ptr<world_core>& world, const std::string& name,
                       all_members_t, std::chrono::milliseconds timeout);

/// The rendezvous name of a group's creation, at rank 0.
std::string creation_rendezvous(const std::string& group);
/// The rendezvous name of the barriers of a group that follows the world, at rank 0.
std::string barrier_rendezvous(const std::string& group);

} // namespace troupe::detail
