// The checks every kind of actor passes, wherever it lives: calls from several threads through
// one handle run in the order each thread sent them; stop() lets the running call finish and
// fails the rest; an actor in another process that may not restart ends with its process.
#pragma once

#include "eventually.hpp"

#include "troupe/actors/actor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
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

/// `slow(300)` is running (answering `value`) and `get()` waits when stop() comes: the first
/// finishes, the second and every later call fail with actor_stopped.
template <class T, class Slow, class Get>
void expect_stop_finishes_the_running_call(const troupe::actor<T>& a, Slow slow, Get get,
                                           int value) {
  using namespace std::chrono_literals;
  auto running = a.call(slow, 300);
  std::this_thread::sleep_for(50ms); // it has reached the actor
  auto waiting = a.call(get);
  a.stop();
  EXPECT_FALSE(a.alive());
  EXPECT_EQ(running.get(10s), value);
  EXPECT_THROW(waiting.get(10s), troupe::actor_stopped);
  EXPECT_THROW(a.call(get), troupe::actor_stopped);
}

/// `a` ends (a bounded wait), and a call then fails with actor_stopped saying `text`.
template <class T, class Get>
void expect_ends_saying(const troupe::actor<T>& a, Get get, const std::string& text) {
  using namespace std::chrono_literals;
  ASSERT_TRUE(eventually([&] { return !a.alive(); })) << "the actor did not end";
  try {
    a.call(get).get(10s);
    ADD_FAILURE() << "expected actor_stopped";
  } catch (const troupe::actor_stopped& e) {
    EXPECT_NE(std::string{e.what()}.find(text), std::string::npos) << e.what();
  }
}

/// `slow(5000)` is running and `get()` waits when `kill()` ends the process of `a`, whose
/// restart_policy allows no restart: the first fails with worker_lost, the second with
/// actor_stopped saying each of `said`, and neither waits long.
template <class T, class Slow, class Get, class Kill>
void expect_loss_without_restart_ends_it(const troupe::actor<T>& a, Slow slow, Get get, Kill kill,
                                         const std::vector<std::string>& said) {
  using namespace std::chrono_literals;
  auto running = a.call(slow, 5000);
  auto waiting = a.call(get);
  std::this_thread::sleep_for(50ms); // it has reached the actor
  kill();
  EXPECT_THROW(running.get(10s), troupe::worker_lost);
  try {
    waiting.get(10s);
    ADD_FAILURE() << "expected actor_stopped";
  } catch (const troupe::actor_stopped& e) {
    for (const auto& text : said)
      EXPECT_NE(std::string{e.what()}.find(text), std::string::npos) << e.what();
  }
  EXPECT_FALSE(a.alive());
  EXPECT_THROW(a.call(get), troupe::actor_stopped);
}

} // namespace troupe::testing
