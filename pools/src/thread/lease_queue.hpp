// One worker slot of a thread pool: the leases waiting for its thread, and the one it runs,
// under the slot's own lock. Callers add to it, its thread takes from the front, and idle
// threads of other slots steal a waiting lease from the back or half of the running one's
// unstarted chunks (lease.hpp), so no lock is shared by every caller and worker.
#pragma once

#include "lease.hpp"

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

namespace troupe::detail {

class lease_queue {
public:
  /// Adds `work` at the back, unless `refuse()` (asked under the lock) says the pool takes no
  /// more work; whether it was added.
  bool push(lease_ptr work, const std::function<bool()>& refuse);
  /// The slot's thread: the next lease to run, from the front (now the running one), or null.
  lease_ptr take_next();
  /// The slot's thread: the running lease ended, or (put_back) goes back to the front for the
  /// slot's next thread, unfinished.
  void finished() noexcept;
  void put_back(lease_ptr unfinished);
  /// Another slot's idle thread: a waiting lease from the back, or null.
  lease_ptr steal_waiting();
  /// Another slot's idle thread: half the running lease's unstarted chunks (at most `limit`), as
  /// a lease of their own, or null.
  lease_ptr split_running(std::size_t limit);
  /// How many of the running lease's chunks have not started (0 if none runs).
  std::size_t running_unclaimed();
  /// Takes every waiting lease `which` selects out of the queue, and the unstarted chunks of
  /// the running one if it selects that, to `take` (outside the lock).
  void take_out(const std::function<bool(const lease&)>& which,
                const std::function<void(lease&)>& take);
  /// Whether a lease waits here or the running one has chunks not started: work an idle thread
  /// of another slot could take (under the lock, so a lease put in by a thief is seen).
  bool has_work_to_share();
  /// Whether leases wait here (without the lock: a hint for idle threads).
  bool has_waiting() const noexcept { return waiting_.load(std::memory_order_seq_cst) != 0; }
  /// Takes the lock and lets it go: whoever pushed under it before has finished pushing.
  void sweep() { std::lock_guard guard{mutex_}; }

private:
  std::mutex mutex_;
  std::deque<lease_ptr> waiting_leases_;
  lease_ptr running_;
  std::atomic<std::size_t> waiting_{0}; // waiting_leases_.size(), readable without the lock
};

} // namespace troupe::detail
