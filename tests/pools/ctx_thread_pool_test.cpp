#include "pool_test_support.hpp"

#include "troupe/pools/ctx_thread_pool.hpp"

#include <atomic>
#include <mutex>
#include <set>
#include <string>

namespace {

using namespace troupe::testing;
using ctx_thread_pool_test = pool_test;

TEST_F(ctx_thread_pool_test, every_task_gets_its_workers_own_context) {
  troupe::ctx_thread_pool<int> pool{rt, std::vector<int>{10, 11, 12}};
  EXPECT_EQ(pool.size(), 3u);
  const auto seen = pool.map([](int& ctx, int x) { return std::pair{ctx, x}; }, iota(300), 1);
  ASSERT_EQ(seen.size(), 300u);
  std::set<int> contexts;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].second, static_cast<int>(i));
    contexts.insert(seen[i].first);
  }
  for (int c : contexts)
    EXPECT_TRUE(c >= 10 && c <= 12) << c;
}

TEST_F(ctx_thread_pool_test, a_context_belongs_to_one_worker_thread_and_is_never_shared) {
  struct device {
    int id;
    std::atomic<int> users{0};
    std::atomic<int> overlaps{0};
    std::set<int> threads;
    device(device&& other) noexcept : id(other.id) {}
    explicit device(int i) : id(i) {}
  };
  troupe::ctx_thread_pool<device> pool{
    rt, [](std::size_t i) { return device{static_cast<int>(i)}; }, {.workers = 3}};
  pool.map(
    [](device& d, int) {
      if (d.users.fetch_add(1) != 0)
        ++d.overlaps;
      d.threads.insert(thread_serial());
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      d.users.fetch_sub(1);
    },
    iota(300), 1);
  pool.close();
  pool.join();
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(pool.context(i).id, static_cast<int>(i));
    EXPECT_EQ(pool.context(i).overlaps.load(), 0) << "context " << i << " used concurrently";
    EXPECT_LE(pool.context(i).threads.size(), 1u) << "context " << i << " seen by two threads";
  }
}

TEST_F(ctx_thread_pool_test, the_number_of_contexts_must_match_the_workers) {
  try {
    troupe::ctx_thread_pool<int> pool{rt, std::vector<int>{0, 1, 2, 3}, {.workers = 2}};
    FAIL() << "expected troupe::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("4 contexts given for 2 workers"), std::string::npos)
      << e.what();
  }
  EXPECT_THROW((troupe::ctx_thread_pool<int>{rt, std::vector<int>{}}), troupe::invalid_argument);
  EXPECT_THROW((troupe::ctx_thread_pool<int>{rt, std::function<int(std::size_t)>{}}),
               troupe::invalid_argument);
}

TEST_F(ctx_thread_pool_test, all_pool_calls_pass_the_context_first) {
  troupe::ctx_thread_pool<std::string> pool{rt, std::vector<std::string>{"a", "b"}};
  const std::set<std::string> names{"a", "b"};
  EXPECT_TRUE(names.count(pool.apply([](std::string& c, int) { return c; }, 1)));
  EXPECT_TRUE(names.count(pool.apply_async([](std::string& c) { return c; }).get()));
  const auto star =
    pool.starmap([](std::string& c, int a, int b) { return c + std::to_string(a + b); },
                 std::vector<std::tuple<int, int>>{{1, 1}, {2, 2}});
  ASSERT_EQ(star.size(), 2u);
  EXPECT_EQ(star[0].substr(1), "2");
  EXPECT_EQ(star[1].substr(1), "4");
  std::multiset<int> streamed;
  for (auto v : pool.imap_unordered(
         [](std::string&c, int x) { return static_cast<int>(c.size()) + x; }, iota(10)))
    streamed.insert(v);
  EXPECT_EQ(streamed.size(), 10u);
  EXPECT_EQ(*streamed.rbegin(), 10);
}

TEST_F(ctx_thread_pool_test, a_replaced_worker_keeps_its_context) {
  troupe::ctx_thread_pool<int> pool{rt, std::vector<int>{7}, {.max_tasks_per_worker = 1}};
  const auto seen = pool.map([](int& c, int) { return std::pair{c, thread_serial()}; }, iota(4), 1);
  std::set<int> threads;
  for (auto& [ctx, thread] : seen) {
    EXPECT_EQ(ctx, 7);
    threads.insert(thread);
  }
  EXPECT_EQ(threads.size(), 4u);
}

} // namespace
