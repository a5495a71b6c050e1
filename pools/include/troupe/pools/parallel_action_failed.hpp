// What a parallel action without a post function throws when some of its items failed.
#pragma once

#include "troupe/actors/error.hpp"

#include <cstddef>
#include <exception>
#include <utility>
#include <vector>

namespace troupe {

/// Some items of a parallel action (outcomes::values, inbatch_parallel) failed (and it has no post
/// function to hand them to). The message counts them and describes the first; every failure is
/// kept.
class parallel_action_failed : public detail::error_base<std::runtime_error> {
public:
  /// `failures`: (item index, exception) in item order, at least one.
  parallel_action_failed(std::vector<std::pair<std::size_t, std::exception_ptr>> failures,
                         std::size_t items);

  /// How many items failed.
  std::size_t failed_count() const noexcept { return failures_.size(); }
  /// How many items the action had.
  std::size_t item_count() const noexcept { return items_; }
  /// The first failing item's index and exception.
  const std::pair<std::size_t, std::exception_ptr>& first() const { return failures_.front(); }
  /// Every failure: (item index, exception), in item order.
  const std::vector<std::pair<std::size_t, std::exception_ptr>>& failures() const noexcept {
    return failures_;
  }

private:
  std::vector<std::pair<std::size_t, std::exception_ptr>> failures_;
  std::size_t items_;
};

} // namespace troupe
