// The unit the dispatcher schedules: a job of `chunk_count` chunks, each of which ends exactly
// once, either run by a worker or abandoned by the dispatcher (pool terminated, stream dropped).
// A job is one of two kinds, by where its chunks run: a thread_job runs them in a worker's
// thread; a process_job encodes them for a worker process and is completed from its reply.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace troupe::detail {

/// What a worker passes to the chunks it runs.
struct worker_env {
  std::size_t worker_index = 0;
  void* context = nullptr; // the worker's own context in a context pool
};

class job {
public:
  static constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();

  explicit job(std::size_t chunk_count) noexcept
    : chunk_count_(chunk_count), unended_(chunk_count) {}
  job(const job&) = delete;
  job& operator=(const job&) = delete;
  virtual ~job() = default;

  std::size_t chunk_count() const noexcept { return chunk_count_; }

  /// A job of no chunks never reaches a worker: this completes it on the spot.
  void complete_if_empty() noexcept {
    if (chunk_count_ == 0)
      complete();
  }

  /// Ends chunks [first, last) without running them; `why` becomes their result.
  virtual void abandon(std::size_t first, std::size_t last, std::exception_ptr why) noexcept = 0;

  /// Counts `count` chunks as ended (by run or abandon); the last one completes the job.
  /// Workers call it once per batch rather than per chunk, to keep the counter cold.
  void ended(std::size_t count) noexcept {
    if (count != 0 && unended_.fetch_sub(count, std::memory_order_acq_rel) == count)
      complete();
  }

  // Flow control, for streams whose consumer bounds how far work may run ahead of it.

  /// Dispatcher: how many chunks may have started, given that `started` already have. When that
  /// is no more than `started`, the job is marked stalled so the consumer knows to wake us.
  std::size_t startable(std::size_t started) noexcept {
    auto limit = start_limit_.load();
    if (limit > started)
      return limit;
    stalled_.store(true);
    return start_limit_.load(); // re-read: the consumer may have raised it meanwhile
  }

  /// Consumer: lets chunks below `limit` start. True if the dispatcher stalled on this job and
  /// must be woken. A lifted limit stays lifted: a consumer still reading after close() must
  /// not throttle work that join() waits for.
  bool allow(std::size_t limit) noexcept {
    auto current = start_limit_.load();
    while (current != unlimited && !start_limit_.compare_exchange_weak(current, limit)) {
    }
    return stalled_.exchange(false);
  }

  /// Dispatcher: no limit from now on (the pool is closing).
  void lift_limit() noexcept { start_limit_.store(unlimited); }

  /// Consumer, before the job is submitted: at most `limit` chunks may start until allow().
  void limit_starts(std::size_t limit) noexcept { start_limit_.store(limit); }

protected:
  /// All chunks have ended.
  virtual void complete() noexcept = 0;

private:
  const std::size_t chunk_count_;
  std::atomic<std::size_t> unended_;
  std::atomic<std::size_t> start_limit_{unlimited};
  std::atomic<bool> stalled_{false};
};

using job_ptr = std::shared_ptr<job>;

/// A job of a thread pool: its chunks run in a worker's thread.
class thread_job : public job {
public:
  using job::job;
  /// Runs chunk `chunk`. Exceptions of the task become the job's results. Returns how many of
  /// its items failed (for the pool's statistics).
  virtual std::size_t run(std::size_t chunk, const worker_env& env) noexcept = 0;
};

/// A job of a process pool: its chunks run in a worker process.
class process_job : public job {
public:
  using job::job;
  /// The chunk's calls, encoded for a worker process (the task's name goes alongside).
  virtual std::vector<std::byte> encode_chunk(std::size_t chunk) const = 0;
  /// The registered task the chunk's calls are for, and whether it takes the worker's context.
  virtual const char* task_name() const noexcept = 0;
  virtual bool with_context() const noexcept = 0;
  /// A worker's encoded outcomes for the chunk (see task.hpp), from worker `worker`. Bytes that
  /// do not decode fail the chunk's items with serialization_error. Returns how many failed.
  virtual std::size_t accept_chunk(std::size_t chunk, std::span<const std::byte> outcomes,
                                   const std::string& worker) noexcept = 0;
};

} // namespace troupe::detail
