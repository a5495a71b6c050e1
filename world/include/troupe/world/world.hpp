// troupe::world: named processes, on one host or many, that know each other (machin's World).
//
//   troupe::runtime rt{argc, argv};
//   troupe::world world{rt, troupe::world_options::from_environment()};  // returns once all joined
//   world.on_member_lost([](const std::string& name, int rank) { ... });
//   auto group = world.create_rpc_group("all", world.members());
//   auto everyone = world.create_rpc_group("elastic", troupe::all_members);   // follows joins
//   auto tensors = troupe::create_collective_group(world, {0, 1, 2});   // troupe::collectives
//
// Rank 0 listens at `address`; the others reach it there, then each other, over CAF's network
// layer (TLS when `tls` is set). Members on one host then call each other through shared-memory
// inboxes instead (world_options::shared_memory). A member that dies or freezes is seen by all
// others within about two seconds: calls pending on it fail with troupe::peer_lost, and rank 0's
// loss fails every pending group operation. One world per process at a time.
#pragma once

#include "troupe/actors/runtime.hpp"
#include "troupe/world/rpc_group.hpp"
#include "troupe/world/world_options.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace troupe {

namespace detail {
class world_membership;
struct world_access; // for troupe's modules over world (collective groups)
} // namespace detail

/// world::create_rpc_group(name, troupe::all_members): a group of every member the world has,
/// now and later, instead of a list.
struct all_members_t {
  explicit all_members_t() = default;
};
inline constexpr all_members_t all_members{};

/// This process as a member of a world (machin's World): named processes, on one host or many, that
/// know each other, lose each other and call each other through rpc groups.
class world {
public:
  /// Joins the world; returns when all `world_size` members have (a member of rank world_size
  /// or more: once rank 0 has taken it into the formed world). Throws timeout_error naming the
  /// missing ranks, invalid_argument for a name or rank another member has (or bad options),
  /// network_error if rank 0 refuses this process, state_error if this process is in a world
  /// already.
  world(runtime& rt, world_options options);
  world(const world&) = delete;
  world& operator=(const world&) = delete;
  /// Leaves the world; never waits on other members, dead or alive.
  ~world();

  /// This member's rank.
  int rank() const noexcept;
  /// How many members the world has now: those it formed with and those that joined it since,
  /// less those lost or gone.
  int size() const noexcept;
  /// This member's name.
  const std::string& name() const noexcept;
  /// The names of the members the world has now, in rank order.
  std::vector<std::string> members() const;
  /// The name of the member of rank `rank` (lost or gone, it keeps its name).
  std::string member_name(int rank) const;

  /// Calls `callback(name, rank)` when a member is lost (on a network thread: keep it short).
  /// The world keeps the callback until it stops: what it refers to must live as long.
  void on_member_lost(std::function<void(const std::string& name, int rank)> callback);
  /// Calls `callback(name, rank)` when a member joins the formed world (on a network thread:
  /// keep it short), once every member that was there has learnt of it. Kept as on_member_lost's.
  void on_member_joined(std::function<void(const std::string& name, int rank)> callback);
  /// Calls `callback()` when this member, cut off from the world, has joined it again
  /// (world_options::rejoin), on the thread that made it join: make the groups this member
  /// needs again there (those made before throw state_error). Kept as on_member_lost's.
  void on_rejoined(std::function<void()> callback);

  /// Creates the group `name` of `members` here; returns once every member has created it.
  /// The caller must be one of them. timeout_error if they do not all come within `timeout`
  /// (default: the world's), peer_lost if one is lost.
  rpc_group create_rpc_group(const std::string& name, std::vector<std::string> members);
  /// The same, with `timeout` instead of the world's.
  rpc_group create_rpc_group(const std::string& name, std::vector<std::string> members,
                             std::chrono::milliseconds timeout);
  /// Creates the group `name` of every member the world has, now and later: it follows the
  /// membership. Calls may name any member there is when they are made, one that joined after
  /// the group was made too; each barrier counts the members present when it begins (at rank 0:
  /// one that joins meanwhile passes with it, one that leaves is not waited for, one lost fails
  /// it with peer_lost). Every member
  /// there is when it is made must make it too, and each one that joins later, to call and
  /// meet at barriers: returns once those present have (one that joins later, at once).
  rpc_group create_rpc_group(const std::string& name, all_members_t);
  /// The same, with `timeout` instead of the world's.
  rpc_group create_rpc_group(const std::string& name, all_members_t,
                             std::chrono::milliseconds timeout);

  /// Leaves the world now (the destructor does it too); later calls throw state_error.
  void stop();

private:
  friend struct detail::world_access;
  std::string name_;
  std::shared_ptr<detail::world_membership> membership_;
};

} // namespace troupe
