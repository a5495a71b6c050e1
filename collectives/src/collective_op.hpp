// The completion of one asynchronous collective operation, shared by its
// handles and the thread that runs it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>

namespace troupe::detail {

class collective_op {
public:
  /// The operation ended: `source` is the sender for a receive; `error` what it
  /// threw.
  void finish(int source, std::exception_ptr error) noexcept;
  /// The source (-1 but for receives); rethrows the operation's error;
  /// timeout_error if it has not ended within `timeout`.
  int wait(std::optional<std::chrono::milliseconds> timeout);
  bool ready() noexcept;

private:
  std::mutex mutex_;
  std::condition_variable ended_;
  bool done_ = false;
  int source_ = -1;
  std::exception_ptr error_;
};

} // namespace troupe::detail
