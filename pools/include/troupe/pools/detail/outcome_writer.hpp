// How troupe fills a user's outcomes (outcome.hpp) while items run; outcomes names it its friend.
#pragma once

#include "troupe/pools/outcome.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <utility>

namespace troupe::detail {

/// Fills outcomes while items run: values from any thread into their own slots; failures (rare)
/// under a lock; sorted by finish() once every item is in.
struct outcome_writer {
  template <class R, class... V>
  static void value(outcomes<R>& o, std::size_t i, V&&... v) {
    o.slots_.set(i, std::forward<V>(v)...);
  }

  template <class R>
  static void error(outcomes<R>& o, std::size_t i, std::exception_ptr e) {
    const std::lock_guard hold{o.failures_lock_};
    o.failures_.emplace_back(i, std::move(e));
  }

  template <class R>
  static void finish(outcomes<R>& o) {
    std::sort(o.failures_.begin(), o.failures_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  }
};

} // namespace troupe::detail
