#include "call_executor.hpp"

#include <boost/asio/post.hpp>

namespace troupe::detail {

void call_executor::post(std::function<void()> work) {
  {
    std::lock_guard guard{mutex_};
    ++busy_;
  }
  boost::asio::post(threads_, [this, work = std::move(work)] {
    work();
    std::lock_guard guard{mutex_};
    if (--busy_ == 0)
      idle_.notify_all();
  });
}

bool call_executor::wait_idle(std::optional<std::chrono::milliseconds> limit) {
  std::unique_lock guard{mutex_};
  if (!limit) {
    idle_.wait(guard, [this] { return busy_ == 0; });
    return true;
  }
  return idle_.wait_for(guard, *limit, [this] { return busy_ == 0; });
}

int call_executor::busy() {
  std::lock_guard guard{mutex_};
  return busy_;
}

} // namespace troupe::detail
