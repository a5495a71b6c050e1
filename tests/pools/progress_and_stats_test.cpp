// Progress reports on long work (a bar or a callback) and per-worker statistics.
#include "pool_test_support.hpp"

#include "troupe/pools/thread_pool.hpp"

#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <ranges>
#include <stdexcept>
#include <vector>

namespace {

using namespace troupe::testing;
using progress_test = pool_test;

/// Collects every update a progress callback gets.
struct recorder {
  std::mutex mutex;
  std::vector<troupe::progress_update> updates;
  troupe::progress callback(std::chrono::milliseconds interval = 1ms) {
    return troupe::progress::callback(
      [this](const troupe::progress_update& u) {
        std::lock_guard guard{mutex};
        updates.push_back(u);
      },
      interval);
  }
};

int fails_on_multiples_of_10(int x) {
  std::this_thread::sleep_for(100us);
  if (x % 10 == 0)
    throw std::runtime_error("multiple of 10");
  return x;
}

TEST_F(progress_test, map_reports_counts_and_ends_with_one_final_update) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  recorder seen;
  (void)pool.map(
    [](int x) {
      std::this_thread::sleep_for(100us);
      return x;
    },
    iota(1000), {10, seen.callback()});
  std::lock_guard guard{seen.mutex};
  ASSERT_GE(seen.updates.size(), 2u) << "updates while it ran, and the last";
  const auto& last = seen.updates.back();
  EXPECT_TRUE(last.finished);
  EXPECT_EQ(last.done, 1000u);
  EXPECT_EQ(last.total, 1000u);
  EXPECT_EQ(last.failed, 0u);
  EXPECT_GT(last.rate, 0.0);
  for (std::size_t i = 1; i < seen.updates.size(); ++i)
    EXPECT_GE(seen.updates[i].done, seen.updates[i - 1].done) << "counts only grow";
  EXPECT_EQ(std::count_if(seen.updates.begin(), seen.updates.end(),
                          [](const auto& u) { return u.finished; }),
            1);
}

TEST_F(progress_test, imap_counts_failures_and_learns_a_lazy_inputs_total_at_its_end) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  recorder seen;
  {
    auto stream = pool.imap(
      fails_on_multiples_of_10,
      std::views::iota(1, 101) | std::views::transform([](int x) { return x; }), seen.callback());
    int failures = 0;
    for (int i = 0; i < 100; ++i)
      try {
        (void)stream.next();
      } catch (const std::runtime_error&) {
        ++failures;
      }
    EXPECT_EQ(failures, 10);
  }
  std::lock_guard guard{seen.mutex};
  ASSERT_FALSE(seen.updates.empty());
  EXPECT_FALSE(seen.updates.front().total.has_value())
    << "the input's length is not known at first";
  const auto& last = seen.updates.back();
  EXPECT_TRUE(last.finished);
  EXPECT_EQ(last.done, 100u);
  EXPECT_EQ(last.total, 100u);
  EXPECT_EQ(last.failed, 10u);
}

TEST_F(progress_test, a_bar_is_drawn_only_on_a_terminal_and_says_what_a_user_needs) {
  if (isatty(STDERR_FILENO) == 0) {
    EXPECT_FALSE(static_cast<bool>(troupe::progress::bar())) << "no bar into a file or a pipe";
  }
  troupe::progress_update u;
  u.done = 250;
  u.total = 1000;
  u.failed = 3;
  u.elapsed = std::chrono::seconds{5};
  u.rate = 50;
  u.remaining = std::chrono::seconds{15};
  const auto line = troupe::format_progress("resizing", u);
  for (const char* part :
       {"resizing", "250/1000", "25.0%", "50.0 it/s", "00:05", "00:15", "failed 3"})
    EXPECT_NE(line.find(part), std::string::npos) << part << " is missing from: " << line;
}

TEST_F(progress_test, a_throwing_callback_does_not_break_the_work) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  auto noisy = troupe::progress::callback(
    [](const troupe::progress_update&) { throw std::runtime_error("the UI broke"); });
  EXPECT_EQ(pool.map([](int x) { return x + 1; }, iota(500), {1, noisy}).size(), 500u);
}

TEST_F(progress_test, stats_count_tasks_failures_busy_time_and_replacements_per_worker) {
  troupe::thread_pool pool{rt, {.workers = 2, .max_tasks_per_worker = 10}};
  EXPECT_THROW((void)pool.map(fails_on_multiples_of_10, iota(100, 1), 1), std::runtime_error);
  const auto stats = pool.stats();
  ASSERT_EQ(stats.size(), 2u);
  std::size_t tasks = 0, failed = 0, replacements = 0;
  for (const auto& w : stats) {
    tasks += w.tasks;
    failed += w.items_failed;
    replacements += w.replacements;
    EXPECT_FALSE(w.pid.has_value()) << "threads have no process of their own";
  }
  EXPECT_EQ(tasks, 100u);
  EXPECT_EQ(failed, 10u);
  EXPECT_GE(replacements, 8u) << "100 tasks at 10 per worker: at least 8 fresh workers";
  EXPECT_GT(stats[0].busy + stats[1].busy, 10ms) << "100 items of 100 us";
  EXPECT_EQ(stats[1].index, 1u);
}

} // namespace
