// The bound on an actor's mailbox, shared by the handles' side (which waits for room) and the
// actor (which makes room as it takes calls): an actor in this process and one in another
// process count the same way. Not installed.
#pragma once

#include "troupe/actors/detail/readable.hpp"
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>

#include "troupe/actors/error.hpp"

namespace troupe::detail {

/// How full the mailbox is, shared by the handles' side and the actor.
struct mailbox_bound {
  mailbox_bound(std::size_t max, std::chrono::milliseconds wait) : max(max), wait(wait) {}

  /// Takes a place for one call; false if none came free within `wait`, or `stopped` was set.
  bool reserve(const std::atomic<bool>& stopped) {
    if (queued.fetch_add(1) < max)
      return true;
    queued.fetch_sub(1);
    std::unique_lock lock{mutex};
    ++waiting;
    const bool got = room.wait_for(lock, wait, [&] {
      if (stopped.load())
        return true;
      if (queued.fetch_add(1) < max)
        return true;
      queued.fetch_sub(1);
      return false;
    });
    --waiting;
    return got && !stopped.load();
  }

  /// A call has left the mailbox. A sender that found it full counts itself in `waiting` before
  /// it looks again, so either it sees this place free or this sees it waiting.
  void release() {
    queued.fetch_sub(1);
    if (waiting.load() > 0) {
      std::lock_guard guard{mutex};
      room.notify_one();
    }
  }

  void wake_all() {
    std::lock_guard guard{mutex};
    room.notify_all();
  }

  const std::size_t max;
  const std::chrono::milliseconds wait;
  std::atomic<std::size_t> queued{0};
  std::mutex mutex;
  std::condition_variable room;
  std::atomic<std::size_t> waiting{0};
};

/// What a call that found no room within the wait throws.
inline capacity_error mailbox_full(const std::string& actor, const mailbox_bound& bound) {
  return capacity_error("actor '" + actor + "': its mailbox holds " + std::to_string(bound.max) +
                        " calls, and none ran within " + readable(bound.wait));
}

} // namespace troupe::detail
