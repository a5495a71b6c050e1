// actor<T> and async_result<R> in every state a user can leave them in: empty, moved from, and
// used from other threads while their runtime goes away. Each use works or throws a typed error
// naming what was wrong; none crashes or hangs.
#include "../empty_handle_checks.hpp"

#include "troupe/actors/actor.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/serialization.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace std::chrono_literals;
using troupe::testing::expect_empty_handle_error;
using troupe::testing::threads_refused_once_ended;

struct held_counter {
  explicit held_counter(int start) : n(start) {}
  int add(int k) { return n += k; }
  int get() const { return n; }
  int n;
};
TROUPE_ACTOR(held_counter, int, &held_counter::add, &held_counter::get);

struct other {
  int n = 0;
  int get() const { return n; }
};
TROUPE_ACTOR(other, void, &other::get);

/// Every use of an empty handle: calls, tells and saving throw; the queries answer.
void expect_empty_actor(const troupe::actor<held_counter>& a) {
  expect_empty_handle_error([&] { (void)a.call(&held_counter::add, 1); }, "troupe::actor");
  expect_empty_handle_error([&] { (void)a.call(troupe::idempotent, &held_counter::get); },
                            "troupe::actor");
  expect_empty_handle_error([&] { a.tell(&held_counter::add, 1); }, "troupe::actor");
  expect_empty_handle_error([&] { (void)troupe::serialize(a); }, "troupe::actor");
  EXPECT_FALSE(a.alive());
  EXPECT_EQ(a.name(), "");
  a.stop(); // does nothing
}

TEST(actor_handle_states, a_default_constructed_handle_throws_state_error_on_every_call) {
  expect_empty_actor(troupe::actor<held_counter>{});
}

TEST(actor_handle_states, a_handle_moved_from_is_empty_and_the_one_moved_to_works) {
  troupe::runtime rt;
  auto a = troupe::spawn<held_counter>(rt, {.name = "moved"}, 1);
  auto b = std::move(a);
  expect_empty_actor(a); // NOLINT(bugprone-use-after-move): what this test is about
  EXPECT_EQ(b.call(&held_counter::add, 1).get(5s), 2);
  troupe::actor<held_counter> c;
  c = std::move(b);
  expect_empty_actor(b); // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(c.call(&held_counter::get).get(5s), 2);
}

TEST(actor_handle_states, a_result_moved_from_throws_state_error_and_the_one_moved_to_works) {
  troupe::runtime rt;
  auto a = troupe::spawn<held_counter>(rt, 5);
  auto r = a.call(&held_counter::get);
  auto kept = std::move(r);
  // NOLINTBEGIN(bugprone-use-after-move): what this test is about
  expect_empty_handle_error([&] { (void)r.ready(); }, "troupe::async_result");
  expect_empty_handle_error([&] { r.wait(); }, "troupe::async_result");
  expect_empty_handle_error([&] { (void)r.wait(1ms); }, "troupe::async_result");
  expect_empty_handle_error([&] { (void)r.get(); }, "troupe::async_result");
  expect_empty_handle_error([&] { (void)r.get(1s); }, "troupe::async_result");
  expect_empty_handle_error([&] { (void)r.successful(); }, "troupe::async_result");
  expect_empty_handle_error([&] { r.on_result([](int) {}); }, "troupe::async_result");
  expect_empty_handle_error([&] { r.on_error([](std::exception_ptr) {}); }, "troupe::async_result");
  // NOLINTEND(bugprone-use-after-move)
  EXPECT_EQ(kept.get(5s), 5);
}

/// Bytes that name a held_counter's number in this process but claim another registered type: a
/// handle of one type must never reach an actor of another, whose object its calls would misread.
TEST(actor_handle_states, a_travelled_handle_claiming_another_type_for_a_number_is_refused) {
  troupe::runtime rt;
  auto a = troupe::spawn<held_counter>(rt, {.name = "numbered"}, 3);
  // A handle travels as its address: the same payload, sealed as the type it is read as.
  const auto resealed = [](std::vector<std::byte> bytes, std::uint64_t tag) {
    troupe::detail::seal(bytes, tag);
    return bytes;
  };
  using troupe::detail::actor_address;
  using troupe::detail::tag_of;
  auto address =
    troupe::deserialize<actor_address>(resealed(troupe::serialize(a), tag_of<actor_address>()));
  const auto as_handle_of = [&](auto handle) {
    return troupe::deserialize<decltype(handle)>(
      resealed(troupe::serialize(address), tag_of<decltype(handle)>()));
  };
  EXPECT_EQ(as_handle_of(troupe::actor<held_counter>{}).call(&held_counter::get).get(5s), 3);
  address.type = troupe::detail::actor_type_key<other>();
  try {
    (void)as_handle_of(troupe::actor<other>{});
    FAIL() << "expected serialization_error";
  } catch (const troupe::serialization_error& e) {
    EXPECT_NE(std::string{e.what()}.find("claims type"), std::string::npos) << e.what();
  }
}

/// Four threads call through copies of a handle while the runtime stops on this thread: each
/// call returns its value or fails with actor_stopped (when made, or from its result), none waits
/// for ever, and once the actor is stopped every call is refused at once.
TEST(actor_handle_states, calls_from_other_threads_while_the_runtime_stops_run_or_fail_typed) {
  std::optional<troupe::runtime> rt{std::in_place};
  auto a = troupe::spawn<held_counter>(*rt, 0);
  std::atomic<int> ran{0};
  const auto call = [a, &ran](int) {
    auto r = a.call(&held_counter::add, 1);
    try {
      (void)r.get(10s);
      ++ran;
    } catch (const troupe::actor_stopped&) {
      // it was in the mailbox when the actor stopped
    }
  };
  EXPECT_EQ(threads_refused_once_ended<troupe::actor_stopped>(call, [&] { rt.reset(); }), 4)
    << "each caller met the stopped actor";
  EXPECT_GT(ran.load(), 0);
  EXPECT_FALSE(a.alive());
}

} // namespace
