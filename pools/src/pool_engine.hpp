// What runs a pool's jobs behind pool_core: a thread pool's worker threads
// (thread/thread_workers.hpp), or a process pool's dispatcher and the slot actors that drive its
// worker processes (process_engine.hpp).
#pragma once

#include "troupe/pools/detail/job.hpp"
#include "troupe/pools/worker_stats.hpp"

#include <cstddef>
#include <vector>

namespace troupe::detail {

class pool_engine {
public:
  virtual ~pool_engine() = default;
  /// Queues a job; pool_closed once close() or terminate() was called.
  virtual void submit(job_ptr job) = 0;
  /// A held-back stream's consumer let more of it start.
  virtual void wake() = 0;
  /// A stream was dropped: what of it has not started is abandoned.
  virtual void cancel(job_ptr job) = 0;
  /// No more work; what is queued still runs.
  virtual void close() = 0;
  /// No more work; what has not started fails with pool_closed.
  virtual void terminate() = 0;
  /// Waits until every worker has stopped; state_error while the pool runs.
  virtual void join() = 0;
  /// Worker slots (and nodes from other hosts that joined).
  virtual std::size_t size() const noexcept = 0;
  virtual std::vector<worker_stats> stats() const = 0;
};

} // namespace troupe::detail
