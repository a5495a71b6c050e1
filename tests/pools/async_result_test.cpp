#include "pool_test_support.hpp"

#include "troupe/pools/thread_pool.hpp"

#include <atomic>
#include <future>
#include <stdexcept>
#include <string>

namespace {

using namespace troupe::testing;
using async_result_test = pool_test;

TEST_F(async_result_test, get_with_timeout_throws_timeout_error_then_succeeds_later) {
  troupe::thread_pool pool{rt, {.workers = 1}};
  gate g;
  auto r = pool.apply_async([f = g.opened] {
    f.wait();
    return 5;
  });
  EXPECT_FALSE(r.ready());
  EXPECT_THROW((void)r.get(10ms), troupe::timeout_error);
  EXPECT_FALSE(r.wait(10ms));
  g.open.set_value();
  EXPECT_EQ(r.get(10s), 5) << "the result stays retrievable after a timeout";
  EXPECT_TRUE(r.ready());
  EXPECT_TRUE(r.wait(0ms));
}

TEST_F(async_result_test, successful_throws_until_ready) {
  troupe::thread_pool pool{rt, {.workers = 1}};
  gate g;
  auto r = pool.apply_async([f = g.opened] { f.wait(); });
  EXPECT_THROW((void)r.successful(), troupe::state_error);
  g.open.set_value();
  r.wait();
  EXPECT_TRUE(r.successful());
}

TEST_F(async_result_test, on_result_is_called_with_the_value) {
  troupe::thread_pool pool{rt, {.workers = 1}};
  gate g;
  std::promise<int> seen;
  auto r = pool
             .apply_async([f = g.opened] {
               f.wait();
               return 41;
             })
             .on_result([&](const int& v) { seen.set_value(v + 1); })
             .on_error([](std::exception_ptr) { ADD_FAILURE() << "on_error on success"; });
  g.open.set_value();
  auto fut = seen.get_future();
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(fut.get(), 42);
  EXPECT_EQ(r.get(), 41);
}

TEST_F(async_result_test, on_error_is_called_with_the_tasks_exception) {
  troupe::thread_pool pool{rt, {.workers = 1}};
  std::promise<std::string> seen;
  auto r = pool.apply_async([]() -> int { throw std::length_error("too long"); })
             .on_result([](const int&) { ADD_FAILURE() << "on_result on failure"; })
             .on_error([&](std::exception_ptr e) {
               try {
                 std::rethrow_exception(e);
               } catch (const std::length_error& x) {
                 seen.set_value(x.what());
               }
             });
  auto fut = seen.get_future();
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(fut.get(), "too long");
}

TEST_F(async_result_test, a_callback_added_after_completion_runs_at_once) {
  troupe::thread_pool pool{rt, {.workers = 1}};
  auto r = pool.apply_async([] { return 3; });
  r.wait();
  int seen = 0;
  r.on_result([&](const int& v) { seen = v; });
  EXPECT_EQ(seen, 3);
}

TEST_F(async_result_test, map_async_callbacks_get_the_whole_list_once) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  std::atomic<int> calls{0};
  std::promise<std::vector<int>> seen;
  auto r = pool.map_async([](int x) { return x * 10; }, iota(20), 3)
             .on_result([&](const std::vector<int>& v) {
               ++calls;
               seen.set_value(v);
             });
  auto fut = seen.get_future();
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  const auto v = fut.get();
  ASSERT_EQ(v.size(), 20u);
  EXPECT_EQ(v[19], 190);
  EXPECT_EQ(calls.load(), 1);
  std::promise<void> failed;
  pool
    .starmap_async(
      [](int a, int) -> int {
        if (a == 2)
          throw std::runtime_error("x");
        return a;
      },
      std::vector<std::tuple<int, int>>{{1, 1}, {2, 2}, {3, 3}})
    .on_error([&](std::exception_ptr) { failed.set_value(); })
    .wait();
  EXPECT_EQ(failed.get_future().wait_for(10s), std::future_status::ready);
}

TEST_F(async_result_test, a_throwing_callback_does_not_break_the_pool) {
  troupe::thread_pool pool{rt, {.workers = 1}};
  auto r = pool.apply_async([] { return 1; }).on_result([](const int&) {
    throw std::runtime_error("callback bug");
  });
  EXPECT_EQ(r.get(), 1);
  EXPECT_EQ(pool.apply([] { return 2; }), 2);
}

TEST_F(async_result_test, get_on_an_rvalue_moves_the_value_out) {
  troupe::thread_pool pool{rt, {.workers = 1}};
  auto r = pool.apply_async([] { return std::make_unique<int>(9); });
  std::unique_ptr<int> p = std::move(r).get();
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, 9);
}

} // namespace
