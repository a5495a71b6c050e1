// This process's membership in a world, across its incarnations: the world_core it is now and,
// with world_options::rejoin, the thread that makes it a new one when it is cut off from the
// world (it lost rank 0), as soon as rank 0 can be reached again. troupe::world holds it. Users'
// threads read the current core while that thread replaces it: it owns its lock.
#pragma once

#include "world_callbacks.hpp"
#include "world_core.hpp"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace troupe::detail {

/// How long a member cut off from the world waits between two attempts to join it again.
inline constexpr auto rejoin_pause = std::chrono::seconds{1};

class world_membership : public service {
public:
  /// Joins the world as `options` say (their rank given); throws as world's constructor does.
  world_membership(runtime_state& rt, world_options options);
  ~world_membership() override;
  world_membership(const world_membership&) = delete;
  world_membership& operator=(const world_membership&) = delete;

  /// The incarnation this member is now; state_error once stopped.
  std::shared_ptr<world_core> core() const;
  world_callbacks& callbacks() noexcept { return *callbacks_; }
  const world_options& options() const noexcept { return options_; }
  runtime_state& runtime() const noexcept { return rt_; }

  /// Leaves the world, ending an attempt to join it again; never waits on other members
  /// (an attempt's connection to rank 0 at most rejoin_reach).
  void stop() noexcept;
  void shutdown() noexcept override { stop(); }

private:
  /// `core` lost rank 0 (world_callbacks::cut_off): the rejoiner takes over if it is this
  /// member's current incarnation.
  void cut_off(const world_core& core) noexcept;
  /// The rejoiner thread: waits for a cut-off, then makes a new incarnation, until stopped.
  void rejoin_when_cut_off() noexcept;
  /// A new incarnation that rank 0 took in, trying until one is; null once stopped.
  std::shared_ptr<world_core> join_again() noexcept;
  /// One attempt: the incarnation, or null (`why` says why not).
  std::shared_ptr<world_core> try_joining_again(std::string& why) noexcept;

  runtime_state& rt_;
  const world_options options_;
  const std::shared_ptr<world_callbacks> callbacks_ = std::make_shared<world_callbacks>();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<world_core> core_;
  std::shared_ptr<world_core> joining_; // the attempt in progress, for stop() to end
  bool cut_off_ = false; // the current incarnation lost rank 0: the rejoiner's to act on
  bool stopping_ = false;
  std::thread rejoiner_; // with world_options::rejoin only
};

} // namespace troupe::detail
