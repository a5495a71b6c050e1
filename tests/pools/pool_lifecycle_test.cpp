// close / join / terminate ordering, use after close, destruction with work in flight, and a
// runtime that goes away under live pools: the paths where pools usually hang.
#include "../empty_handle_checks.hpp"
#include "pool_test_support.hpp"

#include "troupe/pools/thread_pool.hpp"

#include <atomic>
#include <future>
#include <memory>
#include <thread>
#include <vector>

namespace {

using namespace troupe::testing;
using pool_lifecycle_test = pool_test;
using troupe::testing::expect_empty_handle_error;

template <class F>
std::chrono::milliseconds time_of(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start);
}

TEST_F(pool_lifecycle_test, close_lets_queued_work_finish_then_join_returns) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  auto r = pool.map_async(
    [](int x) {
      std::this_thread::sleep_for(100us);
      return x + 1;
    },
    iota(200), 1);
  pool.close();
  pool.join();
  ASSERT_TRUE(r.ready()) << "join returned before the queued work finished";
  EXPECT_EQ(r.get(), iota(200, 1));
}

TEST_F(pool_lifecycle_test, no_new_work_after_close) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  pool.close();
  EXPECT_THROW((void)pool.map([](int x) { return x; }, iota(3)), troupe::pool_closed);
  EXPECT_THROW((void)pool.apply_async([] { return 1; }), troupe::pool_closed);
  EXPECT_THROW((void)pool.imap([](int x) { return x; }, iota(3)), troupe::pool_closed);
  EXPECT_THROW((void)pool.map([](int x) { return x; }, std::vector<int>{}), troupe::pool_closed)
    << "even empty input is refused on a closed pool";
  pool.close(); // idempotent
  pool.join();
  pool.join(); // and so is join
}

TEST_F(pool_lifecycle_test, join_on_a_running_pool_throws_state_error) {
  troupe::thread_pool pool{rt, {.workers = 1}};
  try {
    pool.join();
    FAIL() << "expected troupe::state_error";
  } catch (const troupe::state_error& e) {
    EXPECT_NE(std::string{e.what()}.find("close() or terminate()"), std::string::npos);
  }
  EXPECT_EQ(pool.apply([] { return 1; }), 1) << "the pool is still usable";
}

TEST_F(pool_lifecycle_test, terminate_fails_every_pending_result_with_pool_closed) {
  troupe::thread_pool pool{rt, {.workers = 1}};
  troupe::testing::gate gate;
  std::promise<void> started;
  auto running = pool.apply_async([&, f = gate.opened] {
    started.set_value();
    f.wait();
    return 7;
  });
  started.get_future().wait();
  auto queued = pool.map_async([](int x) { return x; }, iota(100), 1);
  auto single = pool.apply_async([] { return 1; });
  auto stream = pool.imap([](int x) { return x; }, iota(10));
  pool.terminate();
  gate.open.set_value();
  EXPECT_EQ(running.get(10s), 7) << "a task already running completes";
  EXPECT_THROW((void)queued.get(10s), troupe::pool_closed);
  EXPECT_THROW((void)single.get(10s), troupe::pool_closed);
  EXPECT_THROW((void)stream.next(10s), troupe::pool_closed);
  pool.join();
  EXPECT_THROW((void)pool.apply_async([] { return 1; }), troupe::pool_closed);
}

TEST_F(pool_lifecycle_test, terminate_after_close_stops_the_queued_work) {
  troupe::thread_pool pool{rt, {.workers = 1}};
  std::atomic<int> ran{0};
  auto r = pool.map_async(
    [&](int x) {
      ++ran;
      std::this_thread::sleep_for(1ms);
      return x;
    },
    iota(1000), 1);
  pool.close();
  pool.terminate();
  pool.join();
  EXPECT_THROW((void)r.get(), troupe::pool_closed);
  EXPECT_LT(ran.load(), 1000);
}

TEST_F(pool_lifecycle_test, close_and_join_do_not_wait_for_an_imap_consumer) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  auto stream = pool.imap([](int x) { return x * 2; }, iota(5000));
  pool.close();
  pool.join(); // the stream's window is lifted: all of it runs without anyone reading
  int count = 0;
  while (auto v = stream.next(0ms)) {
    EXPECT_EQ(*v, 2 * count);
    ++count;
  }
  EXPECT_EQ(count, 5000);
}

TEST_F(pool_lifecycle_test, reading_a_stream_after_close_does_not_throttle_join_again) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  const auto slow_double = [](int x) {
    std::this_thread::sleep_for(1ms); // most items are still to start when close() comes
    return x * 2;
  };
  auto stream = pool.imap(slow_double, iota(500));
  EXPECT_EQ(stream.next(), 0);
  pool.close();
  EXPECT_EQ(stream.next(), 2) << "a read after close must not bring the window back";
  auto joined = std::async(std::launch::async, [&] { pool.join(); });
  ASSERT_EQ(joined.wait_for(30s), std::future_status::ready) << "join waited on the consumer";
  int count = 2;
  while (auto v = stream.next(0ms))
    EXPECT_EQ(*v, 2 * count++);
  EXPECT_EQ(count, 500);
}

TEST_F(pool_lifecycle_test, destroying_a_pool_with_work_in_flight_does_not_wait_for_the_queue) {
  auto pool = std::make_unique<troupe::thread_pool>(rt, troupe::pool_options{.workers = 2});
  auto r = pool->map_async(
    [](int x) {
      std::this_thread::sleep_for(5ms);
      return x;
    },
    iota(2000), 1);
  const auto took = time_of([&] { pool.reset(); });
  EXPECT_LT(took, 2s) << "the destructor waited for queued work (2000 x 5 ms / 2 workers = 5 s)";
  EXPECT_THROW((void)r.get(), troupe::pool_closed);
}

TEST_F(pool_lifecycle_test, a_stream_outliving_its_pool_fails_cleanly) {
  auto pool = std::make_unique<troupe::thread_pool>(rt, troupe::pool_options{.workers = 1});
  std::optional<troupe::imap_stream<int>> stream;
  stream.emplace(pool->imap(
    [](int x) {
      std::this_thread::sleep_for(1ms);
      return x;
    },
    iota(1000)));
  pool.reset();
  int delivered = 0;
  bool closed = false;
  try {
    while (stream->next(10s))
      ++delivered;
  } catch (const troupe::pool_closed&) {
    closed = true;
  }
  EXPECT_TRUE(closed);
  EXPECT_LT(delivered, 1000);
  stream.reset(); // and destroying it does not hang
}

TEST_F(pool_lifecycle_test, a_stream_moved_from_throws_state_error_and_the_one_moved_to_reads) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  auto stream = pool.imap([](int x) { return x * 2; }, iota(4));
  auto kept = std::move(stream);
  // NOLINTBEGIN(bugprone-use-after-move): what this test is about
  expect_empty_handle_error([&] { (void)stream.next(); }, "troupe::imap_stream");
  expect_empty_handle_error([&] { (void)stream.next(1s); }, "troupe::imap_stream");
  expect_empty_handle_error([&] { (void)stream.begin(); }, "troupe::imap_stream");
  // NOLINTEND(bugprone-use-after-move)
  std::vector<int> got;
  for (int y : kept)
    got.push_back(y);
  EXPECT_EQ(got, (std::vector<int>{0, 2, 4, 6}));
}

/// Four threads submit while this one terminates the pool: each submission is refused with
/// pool_closed or gives a result that ends with its value or pool_closed; none waits for ever.
TEST_F(pool_lifecycle_test, submissions_from_other_threads_while_the_pool_terminates_end_typed) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  const auto submit = [&pool](int i) {
    auto r = pool.apply_async([](int x) { return x; }, i);
    try {
      EXPECT_EQ(r.get(10s), i);
    } catch (const troupe::pool_closed&) {
      // it was queued when the pool was terminated
    }
  };
  EXPECT_EQ(threads_refused_once_ended<troupe::pool_closed>(submit, [&] { pool.terminate(); }), 4)
    << "each submitter met the terminated pool";
  pool.join();
}

TEST(pool_runtime_shutdown, a_runtime_terminates_pools_still_alive_when_it_goes) {
  auto rt = std::make_unique<troupe::runtime>();
  auto pool = std::make_unique<troupe::thread_pool>(*rt, troupe::pool_options{.workers = 2});
  auto r = pool->map_async(
    [](int x) {
      std::this_thread::sleep_for(5ms);
      return x;
    },
    iota(2000), 1);
  const auto took = time_of([&] { rt.reset(); });
  EXPECT_LT(took, 2s) << "runtime shutdown waited for queued work";
  EXPECT_THROW((void)r.get(), troupe::pool_closed);
  EXPECT_THROW((void)pool->apply_async([] { return 1; }), troupe::pool_closed);
  pool->join();
  pool.reset(); // the pool outlives its runtime without touching the dead actor system
}

TEST(pool_runtime_shutdown, a_pool_outliving_its_runtime_refuses_work) {
  auto rt = std::make_unique<troupe::runtime>();
  troupe::thread_pool a{*rt, {.workers = 1}};
  EXPECT_EQ(a.apply([] { return 1; }), 1);
  rt.reset();
  EXPECT_THROW((void)a.apply([] { return 1; }), troupe::pool_closed);
}

} // namespace
