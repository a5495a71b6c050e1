// What one item of a parallel action came to: its value, or the exception it threw. Never
// lost: a failure is kept beside the values of the items that succeeded.
//
//   for (const auto& o : outcomes)
//     if (o.failed()) log(o.error()); else use(o.value());
#pragma once

#include "troupe/actors/error.hpp"

#include <algorithm>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe {

template <class R>
class outcome {
public:
  /// An outcome that has not been reached: a state_error if read (an item that never ran).
  outcome() = default;
  static outcome of(R value) {
    outcome o;
    o.value_.emplace(std::move(value));
    return o;
  }
  static outcome of_error(std::exception_ptr error) {
    outcome o;
    o.error_ = std::move(error);
    return o;
  }

  bool failed() const noexcept { return error_ != nullptr || !value_; }
  /// The value; the item's exception rethrown if it failed.
  const R& value() const& {
    rethrow_if_failed();
    return *value_;
  }
  R&& value() && {
    rethrow_if_failed();
    return std::move(*value_);
  }
  /// The exception the item threw; null if it succeeded.
  std::exception_ptr error() const noexcept { return error_; }

private:
  void rethrow_if_failed() const {
    if (error_)
      std::rethrow_exception(error_);
    if (!value_)
      throw state_error("this item's outcome was never reached");
  }
  std::optional<R> value_;
  std::exception_ptr error_;
};

template <>
class outcome<void> {
public:
  outcome() = default;
  static outcome of() {
    outcome o;
    o.reached_ = true;
    return o;
  }
  static outcome of_error(std::exception_ptr error) {
    outcome o;
    o.error_ = std::move(error);
    o.reached_ = true;
    return o;
  }

  bool failed() const noexcept { return error_ != nullptr || !reached_; }
  /// Rethrows the item's exception if it failed.
  void value() const {
    if (error_)
      std::rethrow_exception(error_);
    if (!reached_)
      throw state_error("this item's outcome was never reached");
  }
  std::exception_ptr error() const noexcept { return error_; }

private:
  std::exception_ptr error_;
  bool reached_ = false;
};

/// Whether any item failed (batchflow's any_action_failed).
template <class R>
bool any_action_failed(const std::vector<outcome<R>>& outcomes) {
  return std::any_of(outcomes.begin(), outcomes.end(),
                     [](const outcome<R>& o) { return o.failed(); });
}

} // namespace troupe
