// imap and imap_unordered pull an input that cannot be read by index (an input range, a view, a
// generator) as the consumer reads, a bounded window ahead: the first result does not wait for
// the whole input, memory stays bounded, and an endless input works.
#include "pool_test_support.hpp"

#include "troupe/pools/thread_pool.hpp"

#include <atomic>
#include <list>
#include <memory>
#include <ranges>
#include <set>
#include <stdexcept>

namespace {

using namespace troupe::testing;
using lazy_imap_test = pool_test;

/// An endless input that counts the items pulled from it.
auto counted_naturals(std::shared_ptr<std::atomic<int>> pulled) {
  return std::views::iota(0) | std::views::transform([pulled](int x) {
           ++*pulled;
           return x;
         });
}

TEST_F(lazy_imap_test, an_endless_input_is_pulled_only_a_window_ahead_of_the_consumer) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  auto pulled = std::make_shared<std::atomic<int>>(0);
  {
    auto stream = pool.imap([](int x) { return 3 * x; }, counted_naturals(pulled));
    for (int i = 0; i < 100; ++i)
      ASSERT_EQ(stream.next(), 3 * i);
    EXPECT_LE(pulled->load(), 100 + 64 + 16) << "read-ahead: a window of 64 items, in blocks of 16";
  } // dropping it stops the pulling and cancels what has not started
  const int at_drop = pulled->load();
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(pulled->load(), at_drop);
}

TEST_F(lazy_imap_test, the_first_result_does_not_wait_for_the_whole_input) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  auto pulled = std::make_shared<std::atomic<int>>(0);
  auto million = counted_naturals(pulled) | std::views::take(1'000'000);
  auto stream = pool.imap_unordered([](int x) { return x; }, std::move(million));
  ASSERT_TRUE(stream.next().has_value());
  EXPECT_LT(pulled->load(), 1000);
}

TEST_F(lazy_imap_test, an_lvalue_list_is_read_in_place_and_every_result_comes_once) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  std::list<int> items;
  for (int i = 0; i < 1000; ++i)
    items.push_back(i);
  std::multiset<int> seen;
  for (int y : pool.imap_unordered([](int x) { return x + 1; }, items))
    seen.insert(y);
  std::multiset<int> expected;
  for (int i = 1; i <= 1000; ++i)
    expected.insert(i);
  EXPECT_EQ(seen, expected);
  std::vector<int> ordered;
  for (int y : pool.imap([](int x) { return 2 * x; }, items, 7))
    ordered.push_back(y);
  ASSERT_EQ(ordered.size(), 1000u);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(ordered[static_cast<std::size_t>(i)], 2 * i);
}

TEST_F(lazy_imap_test, an_input_that_throws_fails_at_its_place_and_ends_the_stream) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  auto input = std::views::iota(0) | std::views::transform([](int x) {
                 if (x == 50)
                   throw std::out_of_range("input ran dry at 50");
                 return x;
               });
  auto stream = pool.imap([](int x) { return x; }, std::move(input));
  for (int i = 0; i < 50; ++i)
    ASSERT_EQ(stream.next(), i);
  EXPECT_THROW((void)stream.next(), std::out_of_range);
  EXPECT_EQ(stream.next(), std::nullopt);
}

TEST_F(lazy_imap_test, dropping_a_lazy_stream_of_slow_items_returns_promptly) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  const auto started = std::chrono::steady_clock::now();
  {
    auto stream = pool.imap(
      [](int x) {
        std::this_thread::sleep_for(5ms);
        return x;
      },
      std::views::iota(0) | std::views::transform([](int x) { return x; }));
    EXPECT_EQ(stream.next(), 0);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s)
    << "the unstarted items of the window were cancelled, not run";
}

// multiprocessing.Pool.imap answers after one item of a slow input: so does troupe, a block
// going to the workers as soon as it is read (it waited for a window of 64 items: 1.3 s here).
TEST_F(lazy_imap_test, a_slow_input_is_dispatched_as_it_is_read) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  auto pulled = std::make_shared<std::atomic<int>>(0);
  auto slow = counted_naturals(pulled) | std::views::transform([](int x) {
                std::this_thread::sleep_for(20ms); // an item every 20 ms
                return x;
              });
  auto stream = pool.imap([](int x) { return 2 * x; }, std::move(slow));
  ASSERT_EQ(stream.next(), 0);
  EXPECT_LE(pulled->load(), 4) << "items read before the first result";
  for (int i = 1; i < 10; ++i)
    ASSERT_EQ(stream.next(), 2 * i);
  EXPECT_LE(pulled->load(), 10 + 4) << "and no more than a few ahead of the consumer after";
}

} // namespace
