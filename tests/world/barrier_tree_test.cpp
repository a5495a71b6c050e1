// A group's barriers are met along a tree of its members (world/src/barrier_tree.hpp): each
// member but the root has one parent, each has at most sixteen children, and a barrier's table
// on a member stays bounded whatever its peers send.
#include "barrier_tree.hpp" // world/src

#include <gtest/gtest.h>

#include <set>

namespace troupe::detail {
namespace {

TEST(barrier_tree, every_member_but_the_root_is_the_child_of_exactly_its_parent) {
  for (std::size_t size : {1u, 2u, 16u, 17u, 18u, 256u, 273u, 1024u}) {
    std::multiset<std::size_t> children_seen;
    EXPECT_FALSE(place_in_tree(0, size).parent) << "the root has no parent";
    for (std::size_t position = 0; position < size; ++position) {
      const auto place = place_in_tree(position, size);
      EXPECT_LE(place.children, 16u);
      for (std::size_t child = place.first_child; child < place.first_child + place.children;
           ++child) {
        ASSERT_LT(child, size);
        EXPECT_EQ(place_in_tree(child, size).parent, position) << "size " << size;
        children_seen.insert(child);
      }
    }
    EXPECT_EQ(children_seen.size(), size - 1) << "every member but the root, once, at " << size;
    EXPECT_EQ(children_seen.count(0), 0u);
  }
}

TEST(barrier_tree, a_barrier_of_1024_members_is_three_levels_deep) {
  std::size_t deepest = 0;
  for (std::size_t position = 0; position < 1024; ++position) {
    std::size_t depth = 0;
    for (auto at = place_in_tree(position, 1024).parent; at; at = place_in_tree(*at, 1024).parent)
      ++depth;
    deepest = std::max(deepest, depth);
  }
  EXPECT_EQ(deepest, 3u);
}

TEST(barrier_tree, the_table_refuses_barriers_past_its_bound) {
  barrier_table table;
  for (std::uint64_t n = 0; n < barrier_table::max_in_progress; ++n)
    ASSERT_NE(table.find_or_add({"g", n}), nullptr);
  EXPECT_EQ(table.find_or_add({"g", barrier_table::max_in_progress}), nullptr);
  EXPECT_NE(table.find_or_add({"g", 0}), nullptr) << "one in progress is still found";
  ASSERT_TRUE(table.take({"g", 0}));
  EXPECT_NE(table.find_or_add({"g", barrier_table::max_in_progress}), nullptr)
    << "room again once one ended";
}

TEST(barrier_tree, failures_are_remembered_up_to_their_bound_oldest_forgotten_first) {
  barrier_table table;
  const std::vector<int> ranks{0, 1, 2};
  for (std::uint64_t n = 1; n <= barrier_table::failures_kept + 1; ++n)
    table.remember_failure({"g", n}, ranks, "lost " + std::to_string(n));
  EXPECT_EQ(table.failure({"g", 1}, ranks), nullptr) << "the oldest went";
  ASSERT_NE(table.failure({"g", 2}, ranks), nullptr);
  EXPECT_EQ(*table.failure({"g", 2}, ranks), "lost 2");
  ASSERT_NE(table.failure({"g", barrier_table::failures_kept + 1}, ranks), nullptr);
  table.remember_failure({"g", 2}, ranks, "again");
  EXPECT_EQ(*table.failure({"g", 2}, ranks), "lost 2") << "the first reason stays";
}

TEST(barrier_tree, a_failure_is_remembered_for_the_members_it_had) {
  barrier_table table;
  table.remember_failure({"g", creation_barrier}, {0, 1, 2}, "1 was lost");
  EXPECT_EQ(table.failure({"g", creation_barrier}, {0, 2}), nullptr)
    << "the name's group made with other members has not failed";
  table.remember_failure({"g", creation_barrier}, {0, 2}, "2 was lost");
  ASSERT_NE(table.failure({"g", creation_barrier}, {0, 2}), nullptr);
  EXPECT_EQ(*table.failure({"g", creation_barrier}, {0, 2}), "2 was lost");
  EXPECT_EQ(table.failure({"g", creation_barrier}, {0, 1, 2}), nullptr) << "the latest members";
}

TEST(barrier_tree, a_member_back_lets_failed_creations_be_tried_again_but_not_barriers) {
  barrier_table table;
  const std::vector<int> ranks{0, 1};
  table.remember_failure({"g", creation_barrier}, ranks, "1 was lost");
  table.remember_failure({"h", creation_barrier}, ranks, "1 was lost");
  table.remember_failure({"g", 3}, ranks, "1 was lost");
  table.forget_creation_failures();
  EXPECT_EQ(table.failure({"g", creation_barrier}, ranks), nullptr);
  EXPECT_EQ(table.failure({"h", creation_barrier}, ranks), nullptr);
  EXPECT_NE(table.failure({"g", 3}, ranks), nullptr) << "a barrier that failed stays failed";
}

} // namespace
} // namespace troupe::detail
