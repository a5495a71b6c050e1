// Waiting, in tests, for something another thread or process brings about: polled, and bounded,
// so a test that waits in vain fails rather than hangs.
#pragma once

#include <chrono>
#include <thread>

namespace troupe::testing {

/// Polls `done` every `step` until it holds; false if it still does not after `within`.
template <class Predicate>
bool eventually(Predicate&& done, std::chrono::milliseconds within = std::chrono::seconds{10},
                std::chrono::milliseconds step = std::chrono::milliseconds{2}) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::sleep_for(step);
  }
  return true;
}

} // namespace troupe::testing
