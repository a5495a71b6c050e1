// async_result<R>: the result of work submitted with apply_async, map_async or starmap_async, or
// of a call to an actor.
//
//   auto r = pool.apply_async(slow_square, 7);
//   r.on_result([](int v) { std::cout << v; });      // runs when the task finishes
//   if (r.wait(std::chrono::milliseconds{50})) ...    // or
//   int v = r.get(std::chrono::seconds{1});           // troupe::timeout_error if not ready
//
// `get()` rethrows the task's own exception. Like std::future, an async_result is move-only;
// `get()` on an lvalue may be called repeatedly and returns a reference, `get()` on an rvalue
// (`std::move(r).get()`, or straight off `map_async(...)`) moves the value out. A result moved
// from throws troupe::state_error when used.
#pragma once

#include "troupe/actors/detail/readable.hpp"
#include "troupe/actors/detail/result_state.hpp"
#include "troupe/actors/error.hpp"

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace troupe {

/// The result of work that runs elsewhere (a task, a call, a collective): wait for it, get it (with
/// a timeout, or not), or have a callback called with it. What multiprocessing's AsyncResult gives.
template <class R>
class async_result {
public:
  /// The result's type.
  using value_type = R;

  /// Made by the pools, actors and groups that start the work.
  explicit async_result(std::shared_ptr<detail::result_state<R>> state)
    : state_(std::move(state)) {}

  /// True once the work has finished, successfully or not.
  bool ready() const { return state().ready(); }

  /// Whether the work succeeded. Throws troupe::state_error if it has not finished yet.
  bool successful() const { return state().successful(); }

  /// Waits until the work has finished.
  void wait() const { state().wait(); }

  /// Waits at most `timeout`; true if the result is ready.
  template <class Rep, class Period>
  bool wait(std::chrono::duration<Rep, Period> timeout) const {
    return state().wait_until(deadline_after(timeout));
  }

  /// The value (a reference for non-void R), or the task's exception rethrown.
  decltype(auto) get() const& {
    state().wait();
    return value_ref();
  }

  /// Moves the value out of the result.
  R get() && {
    state().wait();
    return take();
  }

  /// As get(), but throws troupe::timeout_error if not ready within `timeout`. The result stays
  /// retrievable afterwards.
  template <class Rep, class Period>
  decltype(auto) get(std::chrono::duration<Rep, Period> timeout) const& {
    wait_or_throw(timeout);
    return value_ref();
  }

  /// The same, moving the value out.
  template <class Rep, class Period>
  R get(std::chrono::duration<Rep, Period> timeout) && {
    wait_or_throw(timeout);
    return take();
  }

  /// Calls `callback` with the value when the work succeeds: on the worker that finishes it, or
  /// right away on this thread if it already has. Exceptions from it are reported on stderr.
  async_result& on_result(detail::value_callback<R> callback) & {
    state().on_value(std::move(callback));
    return *this;
  }
  /// The same, on a temporary result (returned for chaining).
  async_result on_result(detail::value_callback<R> callback) && {
    state().on_value(std::move(callback));
    return std::move(*this);
  }

  /// Calls `callback` with the exception when the work fails (same threads as on_result).
  async_result& on_error(std::function<void(std::exception_ptr)> callback) & {
    state().on_error(std::move(callback));
    return *this;
  }
  /// The same, on a temporary result (returned for chaining).
  async_result on_error(std::function<void(std::exception_ptr)> callback) && {
    state().on_error(std::move(callback));
    return std::move(*this);
  }

private:
  template <class Rep, class Period>
  static std::chrono::steady_clock::time_point
  deadline_after(std::chrono::duration<Rep, Period> timeout) {
    return std::chrono::steady_clock::now() +
           std::chrono::ceil<std::chrono::steady_clock::duration>(timeout);
  }

  template <class Rep, class Period>
  void wait_or_throw(std::chrono::duration<Rep, Period> timeout) const {
    if (!state().wait_until(deadline_after(timeout)))
      throw timeout_error("result not ready after " + detail::readable(timeout));
  }

  decltype(auto) value_ref() const {
    if constexpr (std::is_void_v<R>)
      state().value();
    else
      return static_cast<const R&>(state().value());
  }

  R take() const {
    if constexpr (std::is_void_v<R>)
      state().value();
    else
      return std::move(state().value());
  }

  /// The shared state; state_error for a result moved from.
  detail::result_state<R>& state() const {
    if (!state_)
      detail::throw_empty_handle("troupe::async_result", "a wait, get or callback");
    return *state_;
  }

  std::shared_ptr<detail::result_state<R>> state_;
};

} // namespace troupe
