// Groups of all members (world::create_rpc_group(name, troupe::all_members)), on 127.0.0.1: the
// group follows the world's membership. A member that joins after it was made makes it at once
// and is called through it by the others; each barrier counts the members present when it
// begins; a member that leaves or is lost is no member any more, and a call to it fails with
// peer_lost; a barrier a member was lost in fails, for a member that had not come yet too.
#include "world_test_support.hpp"

#include "../eventually.hpp"
#include "../tally_actor.hpp"

#include <unistd.h>

#include <algorithm>
#include <set>

TROUPE_TASK(own_process_id, [](int) { return static_cast<int>(getpid()); });

namespace troupe::testing {
namespace {

const std::vector<std::string> two{"0", "1"};
const std::vector<std::string> three{"0", "1", "2"};

/// Waits up to 20 s for `group`'s members to be `expected`.
bool members_become(const troupe::rpc_group& group, const std::vector<std::string>& expected) {
  return eventually([&] { return group.members() == expected; }, 20s);
}

/// The environment of member `rank` of a world of two that takes up to three, on `port`.
std::map<std::string, std::string> elastic_member(int rank, int port) {
  auto environment = member_environment(rank, 2, port);
  environment["TROUPE_MAX_WORLD_SIZE"] = "3";
  return environment;
}

/// Member 1: in the group from the start; meets rank 0 alone, then with the joiner (whom it
/// calls through the same group), then alone again once the joiner has left.
TROUPE_ROLE(follows_from_the_start) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("elastic", troupe::all_members);
    group.barrier(); // with rank 0
    require(members_become(group, three), "the joiner is a member of the group");
    require(group.is_member("2"), "is_member knows the joiner");
    require(group.rpc_sync("2", add_numbers, 1, 2) == 3, "a call to the joiner");
    group.barrier(); // with the joiner
    require(members_become(group, two), "the joiner left the group");
    group.barrier(); // with rank 0 alone again
  });
}

/// Member 2, joining the formed world: makes the group (at once: it exists), calls the others
/// through it, meets them, and leaves.
TROUPE_ROLE(joins_the_elastic_group) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("elastic", troupe::all_members);
    require(group.members() == three, "the group lists every member there is");
    require(group.rpc_sync("0", add_numbers, 2, 2) == 4, "a call to rank 0");
    require(group.rpc_sync("1", add_numbers, 3, 3) == 6, "a call to member 1");
    group.barrier();
  });
}

TEST(world_all_members, a_group_of_all_members_follows_joins_and_leaves) {
  troupe::runtime rt;
  const int port = free_port();
  member_process one{"follows_from_the_start", elastic_member(1, port)};
  auto options = member_options(0, 2, port);
  options.max_world_size = 3;
  troupe::world world{rt, options};
  auto group = world.create_rpc_group("elastic", troupe::all_members);
  EXPECT_EQ(group.members(), two);
  group.barrier(); // two members present: the joiner is not waited for
  member_process joiner{"joins_the_elastic_group", elastic_member(2, port)};
  ASSERT_TRUE(members_become(group, three)) << "the joiner is a member of the group made before";
  EXPECT_EQ(group.rpc_sync("2", own_process_id, 0), joiner.pid()) << "called through it";
  auto here = group.spawn<tally>("0", {.name = "on_0"}, 0);
  auto on_1 = group.spawn<tally>("1", {.name = "on_1"}, 0);
  auto placed = group.spawn<tally>(troupe::least_loaded, {.name = "placed"}, 0);
  EXPECT_EQ(placed.call(&tally::pid).get(10s), joiner.pid())
    << "least_loaded places an actor on the joiner, the member without one";
  const auto devices = group.devices();
  EXPECT_NE(std::find(devices.begin(), devices.end(), "cpu@2"), devices.end())
    << "its devices are the group's";
  group.barrier(); // three
  EXPECT_EQ(joiner.exit_code(20s), 0);
  ASSERT_TRUE(members_become(group, two)) << "the joiner left";
  EXPECT_FALSE(group.is_member("2"));
  EXPECT_THROW(group.rpc_sync("2", add_numbers, 1, 1), troupe::peer_lost)
    << "a call to a member that left";
  EXPECT_THROW(group.rpc_sync("nobody", add_numbers, 1, 1), troupe::invalid_argument);
  group.barrier(); // two again
  EXPECT_EQ(one.exit_code(20s), 0);
}

/// Member 1 of three: meets the others, then, once member 2 is lost, comes to the barrier that
/// member 2's loss failed (it hears so), and meets rank 0 at the next.
TROUPE_ROLE(comes_late_to_a_failed_barrier) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("elastic", troupe::all_members);
    group.barrier();
    require(members_become(group, two), "member 2 was lost");
    try {
      group.barrier();
      require(false, "the barrier member 2 was lost in passed");
    } catch (const troupe::peer_lost& e) {
      require(std::string{e.what()}.find("'2'") != std::string::npos,
              std::string{"it names the lost member: "} + e.what());
    }
    group.barrier(); // with rank 0 alone
  });
}

/// Member 2 of three: meets the others, then waits to be killed.
TROUPE_ROLE(meets_then_waits_to_be_killed) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("elastic", troupe::all_members);
    group.barrier();
    std::this_thread::sleep_for(60s);
  });
}

// A barrier counts the members present when it begins: one of them lost fails it, for the
// member that had not come yet too (so that it does not meet the others' next one instead), and
// the next counts the members left.
TEST(world_all_members, a_member_lost_in_a_barrier_fails_it_and_the_next_counts_those_left) {
  troupe::runtime rt;
  const int port = free_port();
  member_process one{"comes_late_to_a_failed_barrier", member_environment(1, 3, port)};
  member_process victim{"meets_then_waits_to_be_killed", member_environment(2, 3, port)};
  troupe::world world{rt, member_options(0, 3, port)};
  auto group = world.create_rpc_group("elastic", troupe::all_members);
  group.barrier();
  // Rank 0 arrives (its arrival is at its member actor before the loss can be), and gives up
  // waiting; member 2 is killed meanwhile; member 1 comes only once it has seen the loss.
  EXPECT_THROW(group.barrier(100ms), troupe::timeout_error);
  victim.kill_and_collect();
  ASSERT_TRUE(members_become(group, two));
  group.barrier(); // member 1's next one, once it has heard the last one failed
  EXPECT_EQ(one.exit_code(20s), 0);
}

/// Member 2 of three: meets the others, then serves until rank 0 leaves.
TROUPE_ROLE(meets_then_serves) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("elastic", troupe::all_members);
    group.barrier();
    wait_until_gone(group, "0");
  });
}

// An actor whose member is lost is made again on the next member there is, by rank.
TEST(world_all_members, an_actor_of_a_lost_member_restarts_on_the_next_member_there_is) {
  troupe::runtime rt;
  const int port = free_port();
  member_process host{"meets_then_waits_to_be_killed", member_environment(1, 3, port)};
  member_process next{"meets_then_serves", member_environment(2, 3, port)};
  troupe::world world{rt, member_options(0, 3, port)};
  auto group = world.create_rpc_group("elastic", troupe::all_members);
  group.barrier();
  auto a = group.spawn<tally>("1", {.name = "phoenix", .restart = {.max_restarts = 1}}, 100);
  EXPECT_EQ(a.call(&tally::pid).get(10s), host.pid());
  host.kill_and_collect();
  EXPECT_TRUE(eventually([&] {
    try {
      return a.call(&tally::pid).get(10s) == next.pid();
    } catch (const troupe::worker_lost&) {
      return false; // the call met the lost member
    }
  }))
    << "made again on member 2, the next after member 1";
  world.stop();
  EXPECT_EQ(next.exit_code(20s), 0);
}

} // namespace
} // namespace troupe::testing
