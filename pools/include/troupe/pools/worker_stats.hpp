// What each worker slot of a pool has done, for monitoring and tuning:
//
//   for (const auto& w : pool.stats())
//     std::cout << w.index << ": " << w.tasks << " tasks, " << w.items_failed << " failed, "
//               << w.replacements << " replacements\n";
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

namespace troupe {

/// What a worker slot of a pool has done (pool.stats()): tasks run, items failed, time busy,
/// replacements.
struct worker_stats {
  std::size_t index = 0; ///< the slot (0 to workers - 1; nodes after those)
  std::optional<int> pid; ///< process pools: the process serving the slot now, if any
  std::size_t tasks = 0; ///< chunks run (a chunk is `chunksize` items)
  std::size_t items_failed = 0; ///< items whose task threw or that were lost with the worker
  std::chrono::nanoseconds busy{0}; ///< time spent on work
  std::size_t replacements = 0; ///< workers that took the slot after a crash, a freeze, or
                                // max_tasks_per_worker
};

} // namespace troupe
