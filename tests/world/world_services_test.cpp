// Keys: a member remembers which member holds each service and paired value it has looked up,
// so a call asks rank 0 for the owner only the first time, and a lookup asks the owner whether
// it holds the key still; a key withdrawn, or whose owner is lost, is looked up again and found
// where it went.
#include "world_test_support.hpp"

#include "../eventually.hpp"

#include <signal.h>

#include <functional>

namespace troupe::testing {
namespace {

/// Rank 0: forms the world and the group, then waits for the test's member (rank 1) to leave.
TROUPE_ROLE(services_rank0) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("services", everyone);
    wait_until_gone(group, "1");
  });
}

/// Rank 2: pairs "weights" (7), offers "offset" (x + 200), "withdraw_offset" and
/// "unpair_weights", then serves until the test's member (rank 1) leaves.
TROUPE_ROLE(service_host) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("services", everyone);
    group.pair("weights", 7);
    group.register_service("offset", [](int x) { return x + 200; });
    group.register_service("unpair_weights", [&group]() {
      group.unpair("weights");
      return true;
    });
    group.register_service("withdraw_offset", [&group]() {
      group.deregister("offset");
      return true;
    });
    wait_until_gone(group, "1");
    world.stop(); // its threads run withdraw_offset, which uses `group`: done before it goes
  });
}

/// True once calling `probe` throws peer_lost.
bool lost(const std::function<void()>& probe) {
  try {
    probe();
    return false;
  } catch (const troupe::peer_lost&) {
    return true;
  }
}

class world_services : public ::testing::Test {
protected:
  /// The group, once rank 2 offers its services and a first call has told this member where
  /// "offset" is. All: a test that kills rank 0 next must not catch rank 2 registering.
  troupe::rpc_group with_offset_known(troupe::world& world) {
    auto group = world.create_rpc_group("services", everyone);
    EXPECT_TRUE(eventually([&] {
      return group.is_registered("offset") && group.is_registered("unpair_weights") &&
             group.is_registered("withdraw_offset");
    }));
    EXPECT_EQ(group.registered_sync<int>("offset", 1), 201);
    return group;
  }

  int port = free_port();
  troupe::runtime rt;
  member_process rank0{"services_rank0", member_environment(0, 3, port)};
  member_process host{"service_host", member_environment(2, 3, port)};
};

TEST_F(world_services, a_registered_call_asks_rank_0_for_the_owner_only_the_first_time) {
  {
    troupe::world world{rt, member_options(1, 3, port)};
    auto group = with_offset_known(world);
    rank0.signal(SIGKILL);
    ASSERT_TRUE(eventually([&] { return lost([&] { group.is_registered("never_offered"); }); }))
      << "rank 0's loss was seen";
    // Rank 0 holds the key tables: asked again, it would fail these with peer_lost.
    EXPECT_EQ(group.registered_sync<int>("offset", 2), 202);
    EXPECT_EQ(group.registered_async<int>("offset", 3).get(10s), 203);
    EXPECT_EQ(group.registered_remote<int>("offset", 4).to_here(), 204);
  }
  EXPECT_EQ(host.exit_code(30s), 0);
}

// is_registered, is_paired and get_paired of a key whose owner this member knows ask the owner
// whether it holds the key still, not rank 0: a lookup in a loop is no load on rank 0, and is
// answered while rank 0 is frozen (asked, rank 0 would hold them until found lost, 3 s on, and
// then fail them with peer_lost).
TEST_F(world_services, lookups_of_a_known_key_ask_its_owner_not_rank_0) {
  {
    troupe::world world{rt, member_options(1, 3, port)};
    auto group = with_offset_known(world);
    ASSERT_TRUE(group.is_paired("weights"));
    // Connected to the owner first: a member reaches a higher rank through rank 0 the first time.
    ASSERT_EQ(group.rpc_sync("2", 10s, add_numbers, 1, 1), 2);
    ASSERT_TRUE(rank0.freeze());
    EXPECT_TRUE(group.is_registered("offset"));
    EXPECT_TRUE(group.is_paired("weights"));
    EXPECT_EQ(group.get_paired<int>("weights").to_here(), 7);
    rank0.signal(SIGCONT);
  }
  EXPECT_EQ(host.exit_code(30s), 0);
  EXPECT_EQ(rank0.exit_code(30s), 0);
}

// The owner remembered is asked each time: a key its owner withdrew is not found, even before
// rank 0's notice (values have none) reaches this member, and is found where it was taken next.
TEST_F(world_services, a_key_withdrawn_by_its_owner_is_not_found_and_then_found_where_it_went) {
  {
    troupe::world world{rt, member_options(1, 3, port)};
    auto group = with_offset_known(world);
    ASSERT_EQ(group.get_paired<int>("weights").to_here(), 7);
    EXPECT_TRUE(group.registered_sync<bool>("unpair_weights"));
    EXPECT_FALSE(group.is_paired("weights"));
    EXPECT_THROW((void)group.get_paired<int>("weights"), troupe::key_error);
    group.pair("weights", 8);
    EXPECT_TRUE(group.is_paired("weights"));
    EXPECT_EQ(group.get_paired<int>("weights").to_here(), 8);
    group.unpair("weights");
    EXPECT_FALSE(group.is_paired("weights"));
    EXPECT_TRUE(group.registered_sync<bool>("withdraw_offset"));
    EXPECT_FALSE(group.is_registered("offset"));
  }
  EXPECT_EQ(host.exit_code(30s), 0);
  EXPECT_EQ(rank0.exit_code(30s), 0);
}

TEST_F(world_services, a_withdrawn_service_is_looked_up_again_where_it_went) {
  {
    troupe::world world{rt, member_options(1, 3, port)};
    auto group = with_offset_known(world);
    EXPECT_TRUE(group.registered_sync<bool>("withdraw_offset"));
    group.register_service("offset", [](int x) { return x + 100; });
    EXPECT_EQ(group.registered_sync<int>("offset", 1), 101);
    EXPECT_EQ(group.registered_async<int>("offset", 2).get(10s), 102);
  }
  EXPECT_EQ(host.exit_code(30s), 0);
  EXPECT_EQ(rank0.exit_code(30s), 0);
}

TEST_F(world_services, a_lost_owners_service_is_looked_up_again_where_it_went) {
  {
    troupe::world world{rt, member_options(1, 3, port)};
    auto group = with_offset_known(world);
    host.signal(SIGKILL);
    ASSERT_TRUE(eventually([&] { return lost([&] { group.rpc_sync("2", add_numbers, 1, 1); }); }));
    // Rank 0 forgets a lost member's keys when it sees the loss itself.
    ASSERT_TRUE(eventually([&] { return !group.is_registered("offset"); }));
    group.register_service("offset", [](int x) { return x + 100; });
    EXPECT_EQ(group.registered_sync<int>("offset", 1), 101);
  }
  EXPECT_EQ(rank0.exit_code(30s), 0);
}

} // namespace
} // namespace troupe::testing
