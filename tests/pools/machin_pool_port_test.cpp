// machin's test/parallel/test_pool.py, ported for thread_pool and ctx_thread_pool (the
// catalogue is in shared/reference/machin_parallel.md section 8). machin compares with
// all(o == e for o, e in zip(...)), which passes on a short result; these compare lengths too.
#include "pool_test_support.hpp"

#include "troupe/pools/ctx_thread_pool.hpp"
#include "troupe/pools/thread_pool.hpp"

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>

#include <set>
#include <type_traits>

namespace {

using namespace troupe::testing;
using tensor = xt::xarray<float>;

float func(const tensor& x) { return xt::sum(x * 2)(); }
float func2(const tensor& x, const tensor& y) { return xt::sum(x + y)(); }
std::pair<int, int> ctx_func(int& ctx, int x) { return {ctx, x}; }
std::pair<int, int> ctx_func2(int& ctx, int x, int y) { return {ctx, x + y}; }

std::vector<tensor> inputs() {
  std::vector<tensor> xs;
  for (int i = 0; i < 5; ++i)
    xs.push_back(xt::ones<float>({10}) * static_cast<float>(i));
  return xs;
}

std::vector<std::tuple<tensor, tensor>> pair_inputs() {
  std::vector<std::tuple<tensor, tensor>> xs;
  for (auto& x : inputs())
    xs.emplace_back(x, x);
  return xs;
}

const std::vector<float> expected{0, 20, 40, 60, 80};

class machin_thread_pool : public pool_test {
protected:
  troupe::thread_pool pool{rt, {.workers = 2}};
};

TEST_F(machin_thread_pool, test_apply) { EXPECT_EQ(pool.apply(func, xt::ones<float>({10})), 20); }

TEST_F(machin_thread_pool, test_apply_async) {
  EXPECT_EQ(pool.apply_async(func, xt::ones<float>({10})).get(), 20);
}

TEST_F(machin_thread_pool, test_map) { EXPECT_EQ(pool.map(func, inputs()), expected); }

TEST_F(machin_thread_pool, test_map_async) {
  EXPECT_EQ(pool.map_async(func, inputs()).get(), expected);
}

TEST_F(machin_thread_pool, test_imap) {
  std::vector<float> out;
  for (float v : pool.imap(func, inputs()))
    out.push_back(v);
  EXPECT_EQ(out, expected);
}

TEST_F(machin_thread_pool, test_imap_unordered) {
  std::vector<float> out;
  for (float v : pool.imap_unordered(func, inputs()))
    out.push_back(v);
  std::sort(out.begin(), out.end());
  EXPECT_EQ(out, expected);
}

TEST_F(machin_thread_pool, test_starmap) {
  EXPECT_EQ(pool.starmap(func2, pair_inputs()), expected);
}

TEST_F(machin_thread_pool, test_starmap_async) {
  EXPECT_EQ(pool.starmap_async(func2, pair_inputs()).get(), expected);
}

TEST_F(machin_thread_pool, test_lambda_and_local) {
  const tensor y = xt::ones<float>({10});
  auto local = [y](const tensor& x) { return xt::sum(x + y)(); };
  EXPECT_EQ(pool.map(local, inputs()), (std::vector<float>{10, 20, 30, 40, 50}));
  EXPECT_EQ(
    pool.map(
      [](const std::tuple<tensor, tensor>& p) { return func2(std::get<0>(p), std::get<1>(p)); },
      pair_inputs()),
    expected);
  EXPECT_EQ(pool.map(func, inputs()), expected);
}

TEST_F(machin_thread_pool, test_size) { EXPECT_EQ(pool.size(), 2u); }

TEST(machin_pools, test_reduce_pools_cannot_be_copied) {
  // machin: pickling a pool is refused ("cannot be passed" between processes). In C++ a pool is a
  // unique owner of its workers: it can be neither copied nor moved.
  static_assert(!std::is_copy_constructible_v<troupe::thread_pool>);
  static_assert(!std::is_copy_assignable_v<troupe::thread_pool>);
  static_assert(!std::is_copy_constructible_v<troupe::ctx_thread_pool<int>>);
  EXPECT_FALSE(std::is_move_constructible_v<troupe::thread_pool>);
}

// ---- TestCtxThreadPool --------------------------------------------------------------------

using machin_ctx_thread_pool = pool_test;

TEST_F(machin_ctx_thread_pool, test_init) {
  EXPECT_THROW((troupe::ctx_thread_pool<int>{rt, std::vector<int>{0, 1, 2, 3}, {.workers = 2}}),
               troupe::invalid_argument);
  std::atomic<int> inits{0};
  troupe::ctx_thread_pool<int> with_init{
    rt, std::vector<int>{0, 1}, {.workers = 2, .initializer = [&] { ++inits; }}};
  with_init.map([](int&, int x) { return x; }, iota(10), 1);
  with_init.close();
  with_init.join();
  EXPECT_GE(inits.load(), 1);
  troupe::ctx_thread_pool<int> plain{rt, std::vector<int>{0, 1}};
  plain.close();
  plain.join();
}

class machin_ctx_pool : public pool_test {
protected:
  troupe::ctx_thread_pool<int> pool{rt, std::vector<int>{0, 1}};

  static void expect_values_and_contexts(std::vector<std::pair<int, int>> got,
                                         const std::vector<int>& values, std::set<int> contexts) {
    ASSERT_EQ(got.size(), values.size());
    std::vector<int> seen_values;
    for (auto& [ctx, v] : got) {
      EXPECT_TRUE(contexts.count(ctx)) << "context " << ctx;
      seen_values.push_back(v);
    }
    std::sort(seen_values.begin(), seen_values.end());
    EXPECT_EQ(seen_values, values);
  }
};

TEST_F(machin_ctx_pool, test_apply) { EXPECT_EQ(pool.apply(ctx_func, 1).second, 1); }

TEST_F(machin_ctx_pool, test_apply_async) {
  EXPECT_EQ(pool.apply_async(ctx_func, 1).get().second, 1);
}

TEST_F(machin_ctx_pool, test_map) {
  expect_values_and_contexts(pool.map(ctx_func, iota(10)), iota(10), {0, 1});
}

TEST_F(machin_ctx_pool, test_map_async) {
  expect_values_and_contexts(pool.map_async(ctx_func, iota(10)).get(), iota(10), {0, 1});
}

TEST_F(machin_ctx_pool, test_imap) {
  std::vector<std::pair<int, int>> got;
  for (auto p : pool.imap(ctx_func, iota(10)))
    got.push_back(p);
  expect_values_and_contexts(got, iota(10), {0, 1});
}

TEST_F(machin_ctx_pool, test_imap_unordered) {
  std::vector<std::pair<int, int>> got;
  for (auto p : pool.imap_unordered(ctx_func, iota(10)))
    got.push_back(p);
  expect_values_and_contexts(got, iota(10), {0, 1});
}

std::vector<std::tuple<int, int>> doubled(int n) {
  std::vector<std::tuple<int, int>> out;
  for (int i = 0; i < n; ++i)
    out.emplace_back(i, i);
  return out;
}

std::vector<int> evens(int n) {
  std::vector<int> out;
  for (int i = 0; i < n; ++i)
    out.push_back(2 * i);
  return out;
}

TEST_F(machin_ctx_pool, test_starmap) {
  expect_values_and_contexts(pool.starmap(ctx_func2, doubled(10)), evens(10), {0, 1});
}

TEST_F(machin_ctx_pool, test_starmap_async) {
  expect_values_and_contexts(pool.starmap_async(ctx_func2, doubled(10)).get(), evens(10), {0, 1});
}

TEST_F(machin_ctx_pool, test_multiple_ctx_map) {
  troupe::ctx_thread_pool<int> other{rt, std::vector<int>{2, 3}};
  std::vector<std::pair<int, int>> a, b;
  std::thread ta([&] { a = pool.map(ctx_func, iota(50000)); });
  std::thread tb([&] { b = other.map(ctx_func, iota(50000)); });
  ta.join();
  tb.join();
  expect_values_and_contexts(a, iota(50000), {0, 1});
  expect_values_and_contexts(b, iota(50000), {2, 3});
}

} // namespace
