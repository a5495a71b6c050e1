// What a pool's front end can see of its slots while their actors run them: the process serving
// each slot of a process pool, and what each slot has done (stats()). Written by the slot actors
// and the dispatcher, read by worker_pids() and stats().
#pragma once

#include "troupe/pools/worker_stats.hpp"

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace troupe::detail {

class slot_registry {
public:
  void serving(std::size_t slot, int pid) {
    std::lock_guard guard{mutex_};
    at(slot).pid = pid;
  }
  /// `pid` no longer serves `slot` (a replacement may already have taken it).
  void vacated(std::size_t slot, int pid) {
    std::lock_guard guard{mutex_};
    if (auto& s = at(slot); s.pid == pid)
      s.pid.reset();
  }
  void ran(std::size_t slot, std::size_t tasks, std::size_t failed, std::chrono::nanoseconds busy) {
    std::lock_guard guard{mutex_};
    auto& s = at(slot);
    s.tasks += tasks;
    s.items_failed += failed;
    s.busy += busy;
  }
  void replaced(std::size_t slot) {
    std::lock_guard guard{mutex_};
    ++at(slot).replacements;
  }

  std::vector<int> pids() const {
    std::lock_guard guard{mutex_};
    std::vector<int> out;
    for (const auto& [slot, s] : slots_)
      if (s.pid)
        out.push_back(*s.pid);
    return out;
  }
  /// Every slot from 0 to at least `slots` - 1.
  std::vector<worker_stats> stats(std::size_t slots) const {
    std::lock_guard guard{mutex_};
    std::vector<worker_stats> out;
    for (std::size_t i = 0; i < slots || slots_.count(i) != 0; ++i) {
      const auto it = slots_.find(i);
      out.push_back(it == slots_.end() ? worker_stats{} : it->second);
      out.back().index = i;
    }
    return out;
  }

private:
  worker_stats& at(std::size_t slot) { return slots_[slot]; }

  mutable std::mutex mutex_;
  std::map<std::size_t, worker_stats> slots_;
};

/// Counts one slot's work as it is done, before it is reported ended: a caller that has seen a
/// result sees its work in stats() too.
class slot_meter {
public:
  slot_meter(std::shared_ptr<slot_registry> registry, std::size_t slot)
    : registry_(std::move(registry)), slot_(slot) {}
  /// A lease begins: busy time runs from here.
  void begin() noexcept { mark_ = std::chrono::steady_clock::now(); }
  /// `tasks` chunks are about to be reported ended; `failed` items (or lost chunks) failed.
  void count(std::size_t tasks, std::size_t failed) noexcept {
    const auto now = std::chrono::steady_clock::now();
    registry_->ran(slot_, tasks, failed, now - mark_);
    mark_ = now;
  }
  slot_registry& registry() noexcept { return *registry_; }

private:
  std::shared_ptr<slot_registry> registry_;
  std::size_t slot_;
  std::chrono::steady_clock::time_point mark_ = std::chrono::steady_clock::now();
};

} // namespace troupe::detail
