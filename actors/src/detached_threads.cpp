#include "troupe/actors/detached_threads.hpp"

namespace troupe::detail {

/// Lives as long as the thread it marks: its destructor runs as the thread exits, after the
/// actor's cleanup has handed the clock its last event.
struct detached_threads::thread_mark {
  std::shared_ptr<detached_threads> owner;
  ~thread_mark() {
    if (owner)
      owner->exited();
  }
};

void detached_threads::count_this_thread(const std::shared_ptr<detached_threads>& owner) {
  thread_local thread_mark mark;
  if (mark.owner)
    return;
  {
    std::lock_guard guard{owner->mutex_};
    ++owner->running_;
  }
  mark.owner = owner;
}

std::size_t detached_threads::await_exit(std::chrono::milliseconds limit) {
  std::unique_lock guard{mutex_};
  all_exited_.wait_for(guard, limit, [this] { return running_ == 0; });
  return running_;
}

void detached_threads::exited() {
  std::lock_guard guard{mutex_};
  if (--running_ == 0)
    all_exited_.notify_all();
}

} // namespace troupe::detail
