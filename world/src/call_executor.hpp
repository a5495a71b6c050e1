// The threads that run other members' calls here, and the count of work posted to them and not
// finished, which stop() waits on (for stop_grace at most). Posting threads and the executor's
// own meet on the count: it owns its lock.
#pragma once

#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>

namespace troupe::detail {

class call_executor {
public:
  explicit call_executor(std::size_t threads) : threads_(threads) {}

  /// Runs `work` on one of the threads.
  void post(std::function<void()> work);
  /// Whether the work posted is done, waiting until `limit` at most (for ever without one).
  bool wait_idle(std::optional<std::chrono::milliseconds> limit);
  /// Work posted and not finished.
  int busy();
  /// Joins the threads (once idle: work still running would be waited for).
  void join() { threads_.join(); }

private:
  std::mutex mutex_;
  std::condition_variable idle_;
  int busy_ = 0;
  boost::asio::thread_pool threads_;
};

} // namespace troupe::detail
