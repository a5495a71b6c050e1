// graph/: the batches of communications (other_seeds.md §2c 12), on the scheduler itself.
#include "batches.hpp" // graph/src: the scheduler is internal

#include <gtest/gtest.h>

#include <algorithm>

namespace troupe::graph::detail {
namespace {

using needs_map = std::map<int, std::vector<int>>;

std::string name(const int& i) { return "item " + std::to_string(i); }

int batches(const needs_map& needs, std::size_t* visits = nullptr) {
  const auto level = batch_levels<int>(needs, name, visits);
  int highest = -1;
  for (const auto& [id, l] : level)
    highest = std::max(highest, l);
  return highest + 1;
}

TEST(graph_batches, a_chain_of_nine_and_one_apart_make_nine_batches) {
  needs_map needs{{0, {}}, {9, {}}};
  for (int i = 1; i <= 8; ++i)
    needs[i] = {i - 1};
  EXPECT_EQ(batches(needs), 9);
}

TEST(graph_batches, a_circle_is_a_cycle_error_naming_an_item_in_it) {
  needs_map needs{{0, {}}};
  for (int i = 1; i < 100; ++i)
    needs[i] = {i - 1};
  needs[60].push_back(95);
  try {
    batches(needs);
    ADD_FAILURE();
  } catch (const cycle_error& e) {
    EXPECT_NE(std::string{e.what()}.find("item "), std::string::npos) << e.what();
  }
}

TEST(graph_batches, a_look_back_tree_has_minimally_many_batches_in_linear_steps) {
  std::vector<std::size_t> steps;
  for (int n : {11, 101, 1001, 10001}) {
    needs_map needs{{0, {}}};
    for (int i = 1; i < n; ++i)
      needs[i] = {std::max(0, i - 5)};
    std::size_t visits = 0;
    EXPECT_EQ(batches(needs, &visits), (n - 1 + 4) / 5 + 1) << n;
    steps.push_back(visits);
  }
  for (std::size_t i = 1; i < steps.size(); ++i)
    EXPECT_LE(steps[i], steps[i - 1] * 12) << "10x the items, about 10x the steps";
}

TEST(graph_batches, a_long_chain_needs_no_deep_stack) {
  needs_map needs{{0, {}}};
  for (int i = 1; i < 300'000; ++i) // a recursive walk would need ~60 MB of stack
    needs[i] = {i - 1};
  EXPECT_EQ(batches(needs), 300'000);
}

} // namespace
} // namespace troupe::graph::detail
