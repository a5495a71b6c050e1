// Where a lease's chunks go when the worker holding it stops holding it (its process or node is
// lost, its machinery fails, the pool terminates, a stream is dropped): the one place that
// answers it, for thread and process pools alike.
//   - chunks the worker never started run on another worker (run_unstarted_elsewhere), or fail
//     with the reason (fail_unstarted);
//   - a chunk that was running on a worker that died runs again elsewhere while it has been tried
//     fewer than max_retries times, else fails with worker_lost (retry_or_fail);
//   - a failed chunk is abandoned with its reason and counted as ended (fail_chunks), so its
//     job completes.
#pragma once

#include "lease.hpp"
#include "slot_registry.hpp"

#include <cstddef>
#include <exception>
#include <functional>
#include <string>

namespace troupe::detail {

/// Chunks [first, last) of a job to run elsewhere, already tried `attempts` times.
using give_back_fn =
  std::function<void(const job_ptr&, std::size_t first, std::size_t last, std::size_t attempts)>;

/// Chunks [first, last) of `job` end in failure with `why`.
void fail_chunks(job& target, std::size_t first, std::size_t last, std::exception_ptr why) noexcept;

/// The chunks of `work` its worker has not started go to `give_back`, to run on another worker.
void run_unstarted_elsewhere(lease& work, const give_back_fn& give_back);

/// The chunks of `work` its worker has not started fail with `why`; counted as failures of the
/// slot when `meter` is given. Returns how many there were.
std::size_t fail_unstarted(lease& work, const std::exception_ptr& why,
                           slot_meter* meter = nullptr) noexcept;

/// Chunk `chunk` of `work` was running on a worker that died: it is given back with one more
/// attempt while `work` has been tried fewer than `max_retries` times; otherwise it fails with
/// `lost`, counted on `meter`.
void retry_or_fail(lease& work, std::size_t chunk, std::size_t max_retries,
                   const std::exception_ptr& lost, const give_back_fn& give_back,
                   slot_meter& meter);

/// An exception that escaped a worker's machinery (not a task's own), as one of troupe's typed
/// errors: troupe's errors as they are, anything else as worker_lost naming the worker.
std::exception_ptr as_worker_failure(std::exception_ptr caught, const std::string& worker);

} // namespace troupe::detail
