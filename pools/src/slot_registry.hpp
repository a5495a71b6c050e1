// What a pool's front end can see of its slots while their actors run them: the process serving
// each slot of a process pool. Written by the slot actors (process_worker), read by
// worker_pids().
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

namespace troupe::detail {

class slot_registry {
public:
  void serving(std::size_t slot, int pid) {
    std::lock_guard guard{mutex_};
    pids_[slot] = pid;
  }
  /// `pid` no longer serves `slot` (a replacement may already have taken it).
  void vacated(std::size_t slot, int pid) {
    std::lock_guard guard{mutex_};
    if (const auto it = pids_.find(slot); it != pids_.end() && it->second == pid)
      pids_.erase(it);
  }
  std::vector<int> pids() const {
    std::lock_guard guard{mutex_};
    std::vector<int> out;
    for (const auto& [slot, pid] : pids_)
      out.push_back(pid);
    return out;
  }

private:
  mutable std::mutex mutex_;
  std::map<std::size_t, int> pids_;
};

} // namespace troupe::detail
