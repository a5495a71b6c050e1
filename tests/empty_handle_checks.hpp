// The checks every handle type passes when it holds nothing (default-constructed or moved
// from): using it throws state_error naming the type, never a crash; and when what it reaches
// ends while other threads use it: each use ends typed, none waits for ever.
#pragma once

#include "troupe/actors/error.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace troupe::testing {

/// `use()` throws state_error saying "empty <type>".
template <class Use>
void expect_empty_handle_error(Use use, const std::string& type) {
  try {
    use();
    ADD_FAILURE() << "expected state_error from an empty " << type;
  } catch (const troupe::state_error& e) {
    EXPECT_NE(std::string{e.what()}.find("empty " + type), std::string::npos) << e.what();
  }
}

/// Four threads call `use(i)` for i = 0, 1, ... until it throws `Refused`; once all run (and a
/// little longer, `running`), `end()` ends what they use on this thread. `use` waits for what its
/// call gives and catches the typed failures a call caught by the end may give. Returns how many
/// threads met `Refused` (every one should, having not waited for ever).
template <class Refused, class Use, class End>
int threads_refused_once_ended(Use use, End end,
                               std::chrono::milliseconds running = std::chrono::milliseconds{5}) {
  std::atomic<int> started{0}, refused{0};
  std::vector<std::thread> users;
  for (int t = 0; t < 4; ++t)
    users.emplace_back([&] {
      ++started;
      for (int i = 0; i < 10'000'000; ++i) {
        try {
          use(i);
        } catch (const Refused&) {
          ++refused;
          return;
        }
      }
    });
  while (started.load() < 4)
    std::this_thread::yield();
  std::this_thread::sleep_for(running);
  end();
  for (auto& user : users)
    user.join();
  return refused.load();
}

} // namespace troupe::testing
