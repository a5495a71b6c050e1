#pragma once

#include <cstddef>
#include <functional>
#include <optional>

namespace troupe {

struct pool_options {
  /// Number of workers, at least 1. Default: std::thread::hardware_concurrency().
  /// Context pools default to the number of contexts they are given.
  std::optional<int> workers;

  /// Runs once in each worker, in the worker's thread, before its first task. If it throws, the
  /// tasks handed to that worker fail with its exception (rather than never running).
  std::function<void()> initializer;

  /// A worker is replaced by a fresh one (new thread, initializer run again) after running this
  /// many tasks, a task being one chunk. Unset: workers live as long as the pool. At least 1.
  std::optional<std::size_t> max_tasks_per_worker;
};

} // namespace troupe
