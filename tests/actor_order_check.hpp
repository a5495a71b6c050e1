// The check every kind of actor passes: calls from several threads through one handle run in
// the order each thread sent them.
#pragma once

#include "troupe/actors/actor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <utility>
#include <vector>

namespace troupe::testing {

/// `senders` threads each tell `note(sender, i)` for i in 0..calls through copies of `a`; then
/// `notes()` (every (sender, i) in the order they ran) must hold each sender's in its order.
template <class T, class Note, class Notes>
void expect_each_senders_order(const troupe::actor<T>& a, Note note, Notes notes, int senders,
                               int calls) {
  std::vector<std::thread> threads;
  for (int s = 0; s < senders; ++s)
    threads.emplace_back([a, note, s, calls] {
      for (int i = 0; i < calls; ++i)
        a.tell(note, s, i);
    });
  for (auto& t : threads)
    t.join();
  const std::vector<std::pair<int, int>> ran = a.call(notes).get(std::chrono::seconds{30});
  ASSERT_EQ(ran.size(), static_cast<std::size_t>(senders * calls));
  std::vector<int> next(static_cast<std::size_t>(senders), 0);
  for (const auto& [sender, seq] : ran)
    EXPECT_EQ(seq, next[static_cast<std::size_t>(sender)]++) << "sender " << sender;
}

} // namespace troupe::testing
