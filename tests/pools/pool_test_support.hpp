// Helpers shared by the pool tests.
#pragma once

#include "troupe/actors/runtime.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <numeric>
#include <thread>
#include <vector>

namespace troupe::testing {

using namespace std::chrono_literals;

/// A fresh runtime per test, so tests cannot leak actors into each other.
class pool_test : public ::testing::Test {
protected:
  troupe::runtime rt;
};

/// An id unique to the calling thread for the whole test run. std::thread::id values are reused
/// once a thread exits, so they cannot tell a replaced worker from the one before it.
inline int thread_serial() {
  static std::atomic<int> next{0};
  thread_local const int serial = next++;
  return serial;
}

/// Holds back every task that waits on it until the test opens it.
struct gate {
  std::promise<void> open;
  std::shared_future<void> opened = open.get_future().share();
};

inline std::vector<int> iota(int n, int from = 0) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

} // namespace troupe::testing
