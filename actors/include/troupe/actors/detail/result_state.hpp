// What an async_result and the work that fulfils it share: the value or the exception, the
// callbacks waiting for it, and the wait (spinning only while a core is idle for it, then
// sleeping until woken: idle_cores.hpp).
#pragma once

#include "troupe/actors/detail/idle_cores.hpp"
#include "troupe/actors/error.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace troupe::detail {

/// Reports the exception being handled, which escaped user code that has no one to throw to (a
/// result's callback, on a worker thread; a tell to an actor): "troupe: <source> threw: ...".
void report_escaped_exception(const std::string& source) noexcept;

template <class R>
using stored_t = std::conditional_t<std::is_void_v<R>, std::monostate, R>;

template <class R>
struct value_callback_of {
  using type = std::function<void(const R&)>;
};
template <>
struct value_callback_of<void> {
  using type = std::function<void()>;
};
template <class R>
using value_callback = typename value_callback_of<R>::type;

/// Shared by an async_result and the job that fulfils it.
template <class R>
class result_state {
public:
  void set_value(stored_t<R> value) noexcept { finish(std::move(value), nullptr); }
  void set_error(std::exception_ptr error) noexcept { finish(std::nullopt, std::move(error)); }

  bool ready() const { return ready_flag_.load(std::memory_order_acquire); }

  void wait() const {
    if (spin_until_ready())
      return;
    std::unique_lock lock{mutex_};
    done_.wait(lock, [&] { return ready_; });
  }

  bool wait_until(std::chrono::steady_clock::time_point deadline) const {
    if (spin_until_ready())
      return true;
    std::unique_lock lock{mutex_};
    return done_.wait_until(lock, deadline, [&] { return ready_; });
  }

  /// After ready: the value, or the task's exception rethrown.
  stored_t<R>& value() {
    if (error_)
      std::rethrow_exception(error_);
    return *value_;
  }

  bool successful() const {
    std::lock_guard guard{mutex_};
    if (!ready_)
      throw state_error("successful() called on a result that is not ready yet");
    return error_ == nullptr;
  }

  void on_value(value_callback<R> callback) {
    std::unique_lock lock{mutex_};
    if (!ready_) {
      value_callbacks_.push_back(std::move(callback));
      return;
    }
    lock.unlock();
    if (value_)
      invoke_value(callback);
  }

  void on_error(std::function<void(std::exception_ptr)> callback) {
    std::unique_lock lock{mutex_};
    if (!ready_) {
      error_callbacks_.push_back(std::move(callback));
      return;
    }
    lock.unlock();
    if (error_)
      invoke_error(callback);
  }

private:
  /// A short task finishes within microseconds; waiting that out awake saves the thread a
  /// sleep and a wake-up, but only while a core is idle for it (idle_cores.hpp): on a busy
  /// machine the waiter sleeps at once, and finish() wakes it.
  bool spin_until_ready() const {
    return spin_while_idle([&] { return ready(); }, std::chrono::microseconds{50});
  }

  void finish(std::optional<stored_t<R>> value, std::exception_ptr error) noexcept {
    std::vector<value_callback<R>> on_value;
    std::vector<std::function<void(std::exception_ptr)>> on_error;
    {
      std::lock_guard guard{mutex_};
      value_ = std::move(value);
      error_ = std::move(error);
      ready_ = true;
      ready_flag_.store(true, std::memory_order_release);
      on_value.swap(value_callbacks_);
      on_error.swap(error_callbacks_);
    }
    done_.notify_all();
    // Outside the lock, and after waiters were released: a callback may call get() itself.
    if (error_)
      for (auto& callback : on_error)
        invoke_error(callback);
    else
      for (auto& callback : on_value)
        invoke_value(callback);
  }

  void invoke_value(value_callback<R>& callback) noexcept {
    try {
      if constexpr (std::is_void_v<R>)
        callback();
      else
        callback(*value_);
    } catch (...) {
      report_escaped_exception("an on_result callback");
    }
  }

  void invoke_error(std::function<void(std::exception_ptr)>& callback) noexcept {
    try {
      callback(error_);
    } catch (...) {
      report_escaped_exception("an on_error callback");
    }
  }

  mutable std::mutex mutex_;
  mutable std::condition_variable done_;
  bool ready_ = false;
  std::atomic<bool> ready_flag_{false}; // ready_, readable without the lock
  std::optional<stored_t<R>> value_;
  std::exception_ptr error_;
  std::vector<value_callback<R>> value_callbacks_;
  std::vector<std::function<void(std::exception_ptr)>> error_callbacks_;
};

} // namespace troupe::detail
