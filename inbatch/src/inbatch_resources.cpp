// What an inbatch_parallel action keeps between its calls: its pools and its batch segment.
#include "troupe/inbatch/inbatch_parallel.hpp"

namespace troupe::detail {

shm_segment inbatch_segments::take(std::size_t bytes) {
  {
    const std::lock_guard hold{lock_};
    if (kept_ && kept_->size() >= bytes) {
      auto segment = std::move(*kept_);
      kept_.reset();
      return segment;
    }
  }
  // Some headroom, so that a batch that grows a little between calls still fits.
  return shm_segment::create(bytes + bytes / 8);
}

void inbatch_segments::give_back(shm_segment segment) {
  const std::lock_guard hold{lock_};
  if (!kept_ || kept_->size() < segment.size())
    kept_.emplace(std::move(segment));
}

std::shared_ptr<thread_pool> inbatch_pools::threads(std::size_t workers) {
  const std::lock_guard lock{mutex_};
  if (!threads_ || threads_->size() < workers) // a call still using the old one keeps it alive
    threads_ =
      std::make_shared<thread_pool>(*rt_, pool_options{.workers = static_cast<int>(workers)});
  return threads_;
}

std::shared_ptr<process_pool> inbatch_pools::processes(std::size_t workers) {
  const std::lock_guard lock{mutex_};
  if (!processes_)
    processes_ = std::make_shared<process_pool>(
      *rt_, process_pool_options{.workers = static_cast<int>(workers)});
  return processes_;
}

} // namespace troupe::detail
