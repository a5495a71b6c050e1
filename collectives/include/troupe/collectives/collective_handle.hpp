// The handle of a collective group's operation started with an `_async` form
// (or isend/irecv).
//
//   auto h = group.all_reduce_async(grads);   // grads must live until the
//   handle is waited on
//   ... compute ...
//   h.wait();                                  // rethrows what the operation
//   threw
//
// Handles may be copied; any copy may wait, from any thread. An operation
// nobody waits on still runs to its end, within the group's timeout.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

namespace troupe {

namespace detail {
class collective_op;
}

/// An operation of a collective group that was started (isend, the *_async collectives): wait for
/// it, with or without a timeout.
class collective_handle {
public:
  /// Made by the group that starts the operation.
  explicit collective_handle(std::shared_ptr<detail::collective_op> op) : op_(std::move(op)) {}

  /// Waits for the operation; rethrows its error.
  void wait() const { wait_for_source(std::nullopt); }
  /// As wait(), but timeout_error (the operation goes on) if it is not done
  /// within `timeout`.
  template <class Rep, class Period>
  void wait(std::chrono::duration<Rep, Period> timeout) const {
    wait_for_source(std::chrono::ceil<std::chrono::milliseconds>(timeout));
  }
  /// True once the operation has finished, well or not.
  bool ready() const;

protected:
  /// The source rank for a receive; -1 otherwise.
  int wait_for_source(std::optional<std::chrono::milliseconds> timeout) const;

private:
  /// The operation; state_error for a handle moved from.
  detail::collective_op& op() const;

  std::shared_ptr<detail::collective_op> op_;
};

/// The handle of irecv: wait() returns the rank the tensor came from (useful
/// with any_source).
class recv_handle : public collective_handle {
public:
  /// Made by the group that starts the receive.
  using collective_handle::collective_handle;
  /// The receive `handle` started.
  explicit recv_handle(collective_handle handle) : collective_handle(std::move(handle)) {}

  /// Waits for the tensor; the rank it came from.
  int wait() const { return wait_for_source(std::nullopt); }
  /// The same, timeout_error (the receive goes on) if it has not come within `timeout`.
  template <class Rep, class Period>
  int wait(std::chrono::duration<Rep, Period> timeout) const {
    return wait_for_source(std::chrono::ceil<std::chrono::milliseconds>(timeout));
  }
};

} // namespace troupe
