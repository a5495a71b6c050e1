// What an inbatch action keeps between its calls (the pools it made for itself), and the checks
// of its settings: the parts of inbatch_parallel.hpp that are not templates.
#pragma once

#include "troupe/actors/runtime.hpp"
#include "troupe/inbatch/detail/inbatch_batch_transfer.hpp"
#include "troupe/inbatch/inbatch_options.hpp"
#include "troupe/pools/process_pool.hpp"
#include "troupe/pools/thread_pool.hpp"

#include <cstddef>
#include <memory>
#include <mutex>

namespace troupe::detail {

/// The pools an action made for itself, kept for its later calls.
class inbatch_pools {
public:
  explicit inbatch_pools(runtime& rt) : rt_(&rt) {}
  /// A thread pool of at least `workers` threads (a larger one replaces a smaller).
  std::shared_ptr<thread_pool> threads(std::size_t workers);
  /// A process pool of `workers` processes, made once.
  std::shared_ptr<process_pool> processes(std::size_t workers);
  /// Where the processes target encodes its batches.
  inbatch_segments& segments() noexcept { return segments_; }

private:
  runtime* rt_;
  std::mutex mutex_;
  std::shared_ptr<thread_pool> threads_;
  std::shared_ptr<process_pool> processes_;
  inbatch_segments segments_;
};

/// Checks a target, debug and n_workers together; throws invalid_argument naming the culprit.
void check_inbatch_settings(inbatch_target target, bool debug, std::size_t n_workers);
std::size_t available_cpus();

} // namespace troupe::detail
