// Actors for users in this process: typed calls and tells, one call at a time in each sender's
// order, exceptions as themselves, stop, the bounded mailbox, and the ways an actor ends.
#include "../actor_checks.hpp"
#include "../eventually.hpp"

#include "troupe/actors/actor.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/actors/runtime.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using troupe::testing::eventually;

struct counter {
  explicit counter(int start) : n(start) {}
  int add(int k) { return n += k; }
  int get() const { return n; }
  const std::string& label() const { return text; }
  void rename(std::string to) { text = std::move(to); }
  int n;
  std::string text = "counter";
};

/// Records every call: (sender, sequence number), and whether two calls ever overlapped.
struct journal {
  void note(int sender, int seq) {
    if (inside.exchange(true))
      overlapped = true;
    entries.emplace_back(sender, seq);
    std::this_thread::yield(); // give an overlapping call the chance to show
    inside = false;
  }
  std::vector<std::pair<int, int>> all() const { return entries; }
  bool ever_overlapped() const { return overlapped; }
  std::atomic<bool> inside{false};
  bool overlapped = false;
  std::vector<std::pair<int, int>> entries;
};

/// Keeps its actor busy in hold() until the test opens it: what lets a test fill a mailbox.
struct gate {
  explicit gate(std::shared_future<void> open) : opened(std::move(open)) {}
  int hold() {
    entered.set_value();
    opened.wait();
    return 1;
  }
  int quick(int k) { return k; }
  std::shared_future<void> entered_future() { return entered.get_future().share(); }
  std::shared_future<void> opened;
  std::promise<void> entered;
};

/// A gate, its actor, and the actor busy in hold().
struct held_gate {
  held_gate(troupe::runtime& rt, const troupe::actor_options& options)
    : handle(troupe::spawn<gate>(rt, options, open.get_future().share())) {
    auto entered = handle.call(&gate::entered_future).get(5s);
    running.emplace(handle.call(&gate::hold));
    if (entered.wait_for(5s) != std::future_status::ready)
      throw std::runtime_error("the actor never entered hold()");
  }
  ~held_gate() { release(); } // never leaves an actor its runtime's stop would wait on
  void release() {
    if (!released.exchange(true))
      open.set_value();
  }
  std::promise<void> open;
  std::atomic<bool> released{false};
  troupe::actor<gate> handle;
  std::optional<troupe::async_result<int>> running;
};

struct thrower {
  int out_of_range() { throw std::out_of_range("index 7 of 3"); }
  int troupes_own() { throw troupe::key_error("no key 'k'"); }
};

/// Counts its own destruction, so a test sees when the actor let go of it.
struct watched {
  explicit watched(std::shared_ptr<std::atomic<int>> destroyed) : gone(std::move(destroyed)) {}
  ~watched() { gone->fetch_add(1); }
  void slow_increment(std::shared_ptr<std::atomic<int>> seen) {
    std::this_thread::sleep_for(2ms);
    seen->fetch_add(1);
  }
  std::shared_ptr<std::atomic<int>> gone;
};

/// An actor that holds a handle to another and calls it from its own calls.
struct forwarder {
  explicit forwarder(troupe::actor<counter> to) : target(std::move(to)) {}
  int forward(int k) { return target.call(&counter::add, k).get(std::chrono::seconds{5}); }
  troupe::actor<counter> target;
};

struct refuses_to_be_made {
  explicit refuses_to_be_made(int k) { throw std::invalid_argument("k=" + std::to_string(k)); }
  void f() {}
};

class actor_test : public ::testing::Test {
protected:
  troupe::runtime rt;
};

TEST_F(actor_test, calls_return_typed_results_and_tells_change_state) {
  auto c = troupe::spawn<counter>(rt, 10);
  troupe::async_result<int> r = c.call(&counter::add, 5);
  EXPECT_EQ(r.get(1s), 15);
  c.tell(&counter::add, 1);
  EXPECT_EQ(c.call(&counter::get).get(1s), 16);
  c.tell(&counter::rename, std::string{"tally"});
  troupe::async_result<std::string> label = c.call(&counter::label); // a copy of the reference
  EXPECT_EQ(label.get(1s), "tally");
  EXPECT_TRUE(c.alive());
  EXPECT_EQ(c.name(), "actor");
}

TEST_F(actor_test, copies_of_a_handle_reach_the_same_actor) {
  auto a = troupe::spawn<counter>(rt, {.name = "shared"}, 0);
  auto b = a;
  std::thread other{[b] { b.tell(&counter::add, 2); }};
  other.join();
  a.tell(&counter::add, 3);
  EXPECT_EQ(b.call(&counter::get).get(1s), 5);
  EXPECT_EQ(b.name(), "shared");
}

TEST_F(actor_test, a_handle_given_to_another_actor_reaches_the_same_actor) {
  auto c = troupe::spawn<counter>(rt, 1);
  auto f = troupe::spawn<forwarder>(rt, c);
  EXPECT_EQ(f.call(&forwarder::forward, 10).get(5s), 11);
  c.tell(&counter::add, 100);
  EXPECT_EQ(f.call(&forwarder::forward, 1).get(5s), 112);
}

TEST_F(actor_test, eight_senders_each_keep_their_order_and_calls_never_overlap) {
  auto j = troupe::spawn<journal>(rt);
  troupe::testing::expect_each_senders_order(j, &journal::note, &journal::all, 8, 500);
  EXPECT_FALSE(j.call(&journal::ever_overlapped).get(1s));
}

TEST_F(actor_test, a_calls_exception_comes_back_as_its_own_type) {
  auto t = troupe::spawn<thrower>(rt);
  EXPECT_THROW(t.call(&thrower::out_of_range).get(1s), std::out_of_range);
  EXPECT_THROW(t.call(&thrower::troupes_own).get(1s), troupe::key_error);
  t.tell(&thrower::out_of_range); // logged; the actor goes on
  EXPECT_TRUE(t.alive());
  EXPECT_THROW(t.call(&thrower::out_of_range).get(1s), std::out_of_range);
}

TEST_F(actor_test, a_constructors_exception_comes_out_of_spawn) {
  EXPECT_THROW(troupe::spawn<refuses_to_be_made>(rt, 3), std::invalid_argument);
}

TEST_F(actor_test, stop_finishes_the_running_call_and_fails_the_waiting_ones) {
  held_gate busy{rt, {}};
  auto& g = busy.handle;
  std::vector<troupe::async_result<int>> waiting;
  for (int k = 0; k < 3; ++k)
    waiting.push_back(g.call(&gate::quick, k));
  g.stop();
  EXPECT_FALSE(g.alive());
  EXPECT_THROW(g.call(&gate::quick, 9), troupe::actor_stopped);
  EXPECT_THROW(g.tell(&gate::quick, 9), troupe::actor_stopped);
  busy.release();
  EXPECT_EQ(busy.running->get(5s), 1);
  for (auto& w : waiting) {
    try {
      w.get(5s);
      ADD_FAILURE() << "a call waiting when the actor stopped ran";
    } catch (const troupe::actor_stopped& e) {
      EXPECT_NE(std::string{e.what()}.find("stop() was called"), std::string::npos) << e.what();
    }
  }
}

TEST_F(actor_test, a_full_mailbox_refuses_after_its_timeout) {
  held_gate busy{rt, {.name = "busy", .max_mailbox = 4, .mailbox_timeout = 100ms}};
  auto& g = busy.handle;
  std::vector<troupe::async_result<int>> queued;
  for (int k = 0; k < 4; ++k)
    queued.push_back(g.call(&gate::quick, k));
  const auto before = std::chrono::steady_clock::now();
  try {
    g.tell(&gate::quick, 99);
    ADD_FAILURE() << "a fifth call fitted a mailbox of four";
  } catch (const troupe::capacity_error& e) {
    EXPECT_GE(std::chrono::steady_clock::now() - before, 100ms);
    EXPECT_NE(std::string{e.what()}.find("'busy'"), std::string::npos) << e.what();
  }
  busy.release();
  for (int k = 0; k < 4; ++k)
    EXPECT_EQ(queued[static_cast<std::size_t>(k)].get(5s), k);
}

TEST_F(actor_test, a_sender_waits_for_room_rather_than_failing_within_the_timeout) {
  held_gate busy{rt, {.max_mailbox = 1, .mailbox_timeout = 10s}};
  auto& g = busy.handle;
  auto first = g.call(&gate::quick, 1);
  auto second = std::async(std::launch::async, [&] { return g.call(&gate::quick, 2).get(10s); });
  EXPECT_EQ(second.wait_for(50ms), std::future_status::timeout); // waiting for room
  busy.release();
  EXPECT_EQ(second.get(), 2);
  EXPECT_EQ(first.get(5s), 1);
}

TEST_F(actor_test, the_last_handle_gone_runs_what_is_queued_then_lets_the_object_go) {
  auto destroyed = std::make_shared<std::atomic<int>>(0);
  auto seen = std::make_shared<std::atomic<int>>(0);
  {
    auto w = troupe::spawn<watched>(rt, destroyed);
    for (int k = 0; k < 20; ++k)
      w.tell(&watched::slow_increment, seen);
  }
  EXPECT_TRUE(eventually([&] { return destroyed->load() == 1; }));
  EXPECT_EQ(seen->load(), 20);
}

TEST(actor_runtime, its_runtime_stopping_fails_what_waits_and_later_calls) {
  std::optional<held_gate> busy;
  std::vector<troupe::async_result<int>> waiting;
  std::thread release;
  {
    troupe::runtime rt;
    busy.emplace(rt, troupe::actor_options{});
    for (int k = 0; k < 3; ++k)
      waiting.push_back(busy->handle.call(&gate::quick, k));
    // The runtime's stop waits for the call running, which this ends.
    release = std::thread{[&] {
      std::this_thread::sleep_for(50ms);
      busy->release();
    }};
  }
  release.join();
  EXPECT_EQ(busy->running->get(5s), 1);
  for (auto& w : waiting)
    EXPECT_THROW(w.get(5s), troupe::actor_stopped);
  EXPECT_FALSE(busy->handle.alive());
  EXPECT_THROW(busy->handle.call(&gate::quick, 1), troupe::actor_stopped);
}

TEST_F(actor_test, a_mailbox_of_no_calls_is_refused) {
  EXPECT_THROW(troupe::spawn<counter>(rt, troupe::actor_options{.max_mailbox = 0}, 1),
               troupe::invalid_argument);
}

} // namespace
