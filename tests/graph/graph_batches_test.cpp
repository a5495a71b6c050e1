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

// An item that extends another needs what that one needs (not that one itself): the same
// levels as its full list, which grows item after item where each exchange feeds the next.
TEST(graph_batches, an_item_extending_another_has_the_level_of_its_full_list) {
  // Full lists: 1 needs {0}, 2 needs {0, 1}, 3 needs {0, 1, 2}; 4 needs {0, 1} plus 3 extends.
  const needs_map full{{0, {}}, {1, {0}}, {2, {0, 1}}, {3, {0, 1, 2}}, {4, {}}, {5, {4}}};
  const needs_map differences{{0, {}}, {1, {0}}, {2, {1}}, {3, {2}}, {4, {}}, {5, {4}}};
  const std::map<int, int> extends{{2, 1}, {3, 2}, {4, 3}};
  const auto want = batch_levels<int>(full, name);
  const auto got = batch_levels<int>(differences, name, nullptr, extends);
  for (int item : {0, 1, 2, 3})
    EXPECT_EQ(got.at(item), want.at(item)) << item;
  EXPECT_EQ(got.at(4), 3) << "4 needs what 3 needs, 0 to 2: one level above 2";
  EXPECT_EQ(want.at(4), 0) << "without it, nothing";
  EXPECT_EQ(got.at(5), 4);
}

TEST(graph_batches, a_circle_through_an_extension_is_a_cycle_error) {
  // 1 extends 2, so it needs 0, whose sender needs 1.
  const needs_map needs{{0, {1}}, {1, {}}, {2, {0}}};
  EXPECT_THROW(batch_levels<int>(needs, name, nullptr, {{1, 2}}), cycle_error);
  EXPECT_NO_THROW(batch_levels<int>(needs, name, nullptr, {{2, 1}})) << "2 extends 1: fine";
}

} // namespace
} // namespace troupe::graph::detail
