// troupe::runtime owns the actor system every pool, queue and node of a program runs on.
//
//   int main(int argc, char** argv) {
//     troupe::runtime rt{argc, argv};              // one per program, created first
//     troupe::thread_pool pool{rt, {.workers = 4}};
//     ...
//   }                                              // pools still alive are terminated here
//
// Create it in `main` (never as a static: an actor system torn down during static destruction
// aborts). Destroying it terminates every pool still attached to it, waiting only for tasks that
// are already running (a running C++ function cannot be interrupted), never for queued work.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace troupe {

namespace detail {
struct runtime_state;
} // namespace detail

/// How a runtime is made.
struct runtime_options {
  /// Threads of the actor scheduler, which runs troupe's dispatchers (pool workers have threads
  /// of their own). Default: 1 on a machine of two cores or fewer, else 2. Command line:
  /// `--troupe-scheduler-threads=N`.
  std::optional<int> scheduler_threads;
};

/// troupe in a process: the actor system every pool, actor, queue and world works on. Create it
/// first in main: a worker process of this program never gets past its constructor. Destroying it
/// terminates the pools still attached.
class runtime {
public:
  runtime();
  /// A runtime with `options`.
  explicit runtime(runtime_options options);

  /// Reads troupe's own flags (`--troupe-...`) from the command line and ignores the rest, so
  /// the program's own argument parsing is unaffected. Flags override `options`.
  ///
  /// In a worker process started by a process pool (`--troupe-worker=...`), or a node joining
  /// a pool on another host (`--troupe-join=HOST:PORT`, the pool's secret in the environment
  /// variable TROUPE_SECRET), this constructor never returns: it serves the pool until the pool
  /// lets it go, then exits the process.
  /// So create the runtime first thing in `main`, before anything a worker should not do.
  runtime(int argc, char** argv, runtime_options options = {});

  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;
  ~runtime();

  /// Scheduler threads in use.
  int scheduler_threads() const noexcept;

private:
  friend detail::runtime_state& runtime_state_of(runtime&);
  std::unique_ptr<detail::runtime_state> state_;
};

} // namespace troupe
