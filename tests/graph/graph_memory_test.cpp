// graph/'s evaluator and memory: every value freed after its last use, and element-wise chains
// computed in place. Its own binary: allocation_counter.cpp replaces operator new for all of it.
#include "../allocation_counter.hpp"

#include "troupe/graph/evaluate.hpp"

#include <gtest/gtest.h>

#include <xtensor/xbuilder.hpp>

namespace troupe::graph {
namespace {

using troupe::testing::large_allocations;
using troupe::testing::live_bytes;
using troupe::testing::peak_bytes;
using troupe::testing::reset_peak;

constexpr std::int64_t side = 512; // 512 x 256 doubles: 1 MiB an array
constexpr std::size_t array_bytes = side * (side / 2) * sizeof(double);

// Transposes cannot be computed in place: each makes a new array, and its operand goes as soon
// as it has been read. Keeping every value would hold 33 arrays.
TEST(graph_memory, each_value_is_freed_after_its_last_use) {
  node_ptr y = placeholder("x", {side, side / 2});
  for (int i = 0; i < 32; ++i)
    y = transpose(y);
  const tensor_map inputs{{"x", xt::ones<double>({side, side / 2})}};
  const auto before = live_bytes();
  reset_peak();
  const auto values = evaluate(make_outputs({{"y", y}}), inputs);
  EXPECT_LE(peak_bytes() - before, 3 * array_bytes);
  EXPECT_EQ(values.at("y"), inputs.at("x"));
}

// 64 element-wise operations, each on the last one's result: one array made, then reused.
TEST(graph_memory, an_element_wise_chain_allocates_once) {
  const auto x = placeholder("x", {side, side / 2});
  node_ptr y = x;
  for (int i = 0; i < 32; ++i)
    y = elementwise("sqrt", {elementwise("abs", {y + x})});
  const tensor_map inputs{{"x", xt::zeros<double>({side, side / 2})}};
  reset_peak();
  const auto values = evaluate(make_outputs({{"y", y}}), inputs);
  EXPECT_EQ(large_allocations(), 1u);
  EXPECT_EQ(values.at("y"), inputs.at("x"));
}

} // namespace
} // namespace troupe::graph
