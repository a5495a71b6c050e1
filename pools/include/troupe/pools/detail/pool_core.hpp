// The type-erased heart of every pool: a dispatcher actor and its workers, behind a pimpl so
// that no CAF header reaches user code. The pool templates turn calls into jobs and hand them
// here.
#pragma once

#include "troupe/actors/actor.hpp"
#include "troupe/pools/detail/job.hpp"
#include "troupe/pools/pool_options.hpp"
#include "troupe/pools/worker_stats.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace troupe {
class runtime;
}

namespace troupe::detail {

/// How a context process pool's workers get their contexts (all empty: no contexts).
struct context_settings {
  std::string factory; // a registered context factory, or
  std::string type; // a registered context type, with
  std::vector<std::vector<std::byte>> values; // one encoded value per worker
};

class pool_core {
public:
  /// A thread pool. `contexts` is empty, or holds one context pointer per worker.
  pool_core(runtime& rt, const pool_options& options, std::vector<void*> contexts);
  /// A process pool.
  pool_core(runtime& rt, const process_pool_options& options, context_settings contexts);
  pool_core(const pool_core&) = delete;
  pool_core& operator=(const pool_core&) = delete;
  /// Terminates and joins.
  ~pool_core();

  /// Queues a job. Throws pool_closed once close() or terminate() was called.
  void submit(job_ptr job);

  /// A job's start limit rose: let the dispatcher hand out more of it.
  void wake();

  /// Abandons the chunks of `job` that have not started.
  void cancel(job_ptr job);

  void close();
  void terminate();
  /// Throws state_error while the pool is running.
  void join();

  /// Worker slots, local and remote nodes that have joined.
  std::size_t size() const noexcept;

  /// The processes of a process pool's local workers that are running now.
  std::vector<int> worker_pids() const;

  /// What each worker slot has done.
  std::vector<worker_stats> stats() const;

  /// The port a process pool takes nodes on, 0 if it takes none.
  std::uint16_t listen_port() const noexcept;

  /// A process pool's: starts an actor of the registered type `type` in a worker process of its
  /// own, watched like the pool's workers.
  std::shared_ptr<actor_core> spawn_actor(actor_options options, std::string type,
                                          std::vector<std::byte> constructor);
  /// The same, in the worker process of local slot `slot`, on a thread of its own there.
  std::shared_ptr<actor_core> spawn_actor_in_slot(std::size_t slot, actor_options options,
                                                  std::string type,
                                                  std::vector<std::byte> constructor);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// Resolves the number of workers from the options (throws troupe::invalid_argument if < 1).
std::size_t worker_count(const pool_options& options);

/// The chunk size for `items` items: `requested` (throws if < 1), else ceil(items / (4 workers)).
std::size_t chunk_size_for(std::optional<std::ptrdiff_t> requested, std::size_t items,
                           std::size_t workers);

} // namespace troupe::detail
