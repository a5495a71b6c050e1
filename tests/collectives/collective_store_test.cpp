// Gloo groups of a world whose tables are in etcd (world_options::store), three member
// processes on 127.0.0.1 and an etcd server the test starts (skipped where etcd is not
// installed): the three all-reduce; rank 0, the store world's coordinator, SIGKILLed, the other
// two make a group of their own and all-reduce in it. (tests/hosts' store_world does the same
// across hosts, where each member must find the address the others reach it at.)
#include "../world/store/store_world_support.hpp"
#include "../world/world_test_support.hpp"

#include "troupe/collectives/collective_group.hpp"

#include <thread>

namespace troupe::testing {
namespace {

/// The sum a gloo group of world ranks `ranks` all-reduces: every member gives 1.
float all_reduce_among(troupe::world& world, const std::vector<int>& ranks) {
  auto group = troupe::create_collective_group(world, ranks, {.timeout = 20s});
  std::vector<float> t(1024, 1.0f);
  group->all_reduce(t);
  return t.front() == t.back() ? t.front() : -1.0f;
}

TROUPE_ROLE(store_collective_until_killed) {
  return as_member([](troupe::world& world) {
    require(all_reduce_among(world, {0, 1, 2}) == 3.0f, "rank 0 all-reduces with the others");
    std::this_thread::sleep_for(60s);
  });
}

TROUPE_ROLE(store_collective_survivor) {
  return as_member([](troupe::world& world) {
    member_events events{world};
    require(all_reduce_among(world, {0, 1, 2}) == 3.0f, "member 2 all-reduces with the others");
    require(events.wait_for("-0"), "member 2 sees rank 0 lost");
    require(all_reduce_among(world, {1, 2}) == 2.0f, "member 2 all-reduces with member 1");
  });
}

using collectives_on_store = world_on_store;

TEST_F(collectives_on_store, a_gloo_group_of_the_survivors_all_reduces_once_rank_0_is_killed) {
  world_of_three_on_store three{"collective", "store_collective_until_killed",
                                "store_collective_survivor"};
  EXPECT_EQ(all_reduce_among(three.world, {0, 1, 2}), 3.0f);
  three.zero.kill_and_collect();
  ASSERT_TRUE(three.events.wait_for("-0")) << "rank 0's lease went, and with it rank 0";
  EXPECT_EQ(all_reduce_among(three.world, {1, 2}), 2.0f) << "the two all-reduce without rank 0";
  EXPECT_EQ(three.two.exit_code(20s), 0);
}

} // namespace
} // namespace troupe::testing
