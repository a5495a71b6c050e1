// Which worker am I? For a task that wants to know where it runs (to pick a device, name a
// file, log):
//
//   TROUPE_TASK(shard_path, [](int i) {
//     const auto me = troupe::this_worker();    // {index, pid} inside a pool's task
//     return "/tmp/shard-" + std::to_string(me->index) + "-" + std::to_string(i);
//   });
#pragma once

#include <cstddef>
#include <optional>

namespace troupe {

/// Which pool worker runs a task: its slot and its process.
struct worker_identity {
  std::size_t index = 0; ///< the worker's slot in its pool, 0 to workers - 1 (nodes after those)
  int pid = 0; ///< the process running the task (the pool's own, in a thread pool)
};

/// The pool worker running the calling task; nullopt when called outside a pool's task.
std::optional<worker_identity> this_worker() noexcept;

} // namespace troupe
