// How a pool's work reports its progress (progress.hpp) as its items finish.
#pragma once

#include "troupe/pools/progress.hpp"

#include <cstddef>
#include <memory>
#include <optional>

namespace troupe::detail {

/// Counts a piece of work's finished items and reports them through a progress.
class progress_tracker {
public:
  progress_tracker(progress how, std::optional<std::size_t> total);
  ~progress_tracker();
  progress_tracker(const progress_tracker&) = delete;
  progress_tracker& operator=(const progress_tracker&) = delete;

  /// `items` more are done, `failed` of them failed. Reports if an interval has passed.
  void completed(std::size_t items, std::size_t failed) noexcept;
  void set_total(std::size_t total) noexcept;
  /// All done: the final report (once).
  void finish() noexcept;

private:
  struct state;
  std::unique_ptr<state> state_;
};

using progress_ptr = std::shared_ptr<progress_tracker>;

/// A tracker for `how`, or null when it reports nothing.
inline progress_ptr track(const progress& how, std::optional<std::size_t> total) {
  return how ? std::make_shared<progress_tracker>(how, total) : nullptr;
}

} // namespace troupe::detail
