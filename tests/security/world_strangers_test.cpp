// Strangers on a formed world, on 127.0.0.1: a process that is no member (no secret is set, so
// it gets past the handshake) cannot run a task, forge a member's leave, announce a member, or
// take a member's rank.
#include "world_security_support.hpp"

TROUPE_TASK(slow_add, [](int a, int b) {
  std::this_thread::sleep_for(std::chrono::milliseconds{1500});
  return a + b;
});

namespace troupe::testing {
namespace {

TEST(world_strangers, a_stranger_cannot_call_a_task_on_a_formed_world) {
  troupe::runtime rt;
  const int port = free_port();
  troupe::world world{rt, member_options(0, 1, port)};
  member_process stranger{"stranger_caller", member_environment(1, 2, port)};
  EXPECT_EQ(stranger.exit_code(20s), 0);
}

TEST(world_strangers, a_strangers_one_way_call_is_answered_as_a_non_members) {
  troupe::runtime rt;
  const int port = free_port();
  troupe::world world{rt, member_options(0, 1, port)};
  member_process stranger{"stranger_direct_caller", member_environment(1, 2, port)};
  EXPECT_EQ(stranger.exit_code(20s), 0);
}

// Calls between reached members are one-way messages answered by one-way messages carrying the
// call's id: an answer settles a call only if it comes from the member the call went to.
TEST(world_strangers, a_strangers_answers_do_not_settle_a_members_calls) {
  troupe::runtime rt;
  const int port = free_port();
  member_process server{"patient_server", member_environment(1, 2, port)};
  auto options = member_options(0, 2, port);
  options.shared_memory = false; // the call goes over TCP
  troupe::world world{rt, options};
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  auto call = group.rpc_async("1", slow_add, 20, 22);
  member_process stranger{"stranger_answerer", member_environment(1, 2, port)};
  EXPECT_EQ(stranger.exit_code(20s), 0);
  EXPECT_EQ(call.get(), 42) << "a stranger's answer settled member 1's call";
  server.kill_and_collect();
}

TEST(world_strangers, a_forged_leave_does_not_hide_a_members_loss) {
  world_with_a_server w;
  std::atomic<bool> lost{false};
  w.world.on_member_lost([&](const std::string& name, int) { lost = lost || name == "1"; });
  member_process stranger{"stranger_leaver", member_environment(1, 2, w.port)};
  EXPECT_EQ(stranger.exit_code(20s), 0);
  w.server.kill_and_collect();
  EXPECT_TRUE(becomes_true(lost))
    << "member 1's loss went unreported after a stranger said it was leaving";
}

// Who joined the world is rank 0's word alone: a stranger's announcement (claiming a member's
// name) is refused and changes no table.
TEST(world_strangers, a_stranger_cannot_announce_a_member) {
  world_with_a_server w;
  member_process stranger{"stranger_announcer", member_environment(1, 2, w.port)};
  EXPECT_EQ(stranger.exit_code(20s), 0);
  EXPECT_EQ(w.world.members(), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(w.group.rpc_sync("1", 5s, add_numbers, 20, 22), 42);
  w.server.kill_and_collect();
}

// A group of all members meets at rank 0 among the members present: a stranger claiming a
// member's name is not counted as that member, and a rendezvous name is bounded.
TEST(world_strangers, a_stranger_cannot_arrive_at_a_group_of_all_members_as_a_member) {
  world_with_a_server w;
  member_process stranger{"stranger_at_a_group_of_all_members", member_environment(1, 2, w.port)};
  EXPECT_EQ(stranger.exit_code(20s), 0);
  EXPECT_EQ(w.group.rpc_sync("1", 5s, add_numbers, 20, 22), 42);
  w.server.kill_and_collect();
}

// Ranks are bounded at the door: a raw join beyond the largest world is refused naming it.
TEST(world_strangers, a_join_beyond_the_largest_world_is_refused_naming_the_ranks) {
  troupe::runtime rt;
  const int port = free_port();
  auto options = member_options(0, 1, port);
  options.max_world_size = 2;
  troupe::world world{rt, options};
  member_process stranger{"stranger_beyond_the_world", member_environment(1, 1, port)};
  EXPECT_EQ(stranger.exit_code(20s), 0);
  EXPECT_EQ(world.members(), std::vector<std::string>{"0"});
}

// Without a secret a process may claim any name on its connection: claiming member 1's, it is
// still not member 1, whose process rank 0 knows.
TEST(world_strangers, a_stranger_claiming_a_members_name_does_not_take_its_rank) {
  world_with_a_server w;
  auto environment = member_environment(1, 2, w.port);
  environment["TROUPE_STRANGER_NAME"] = "1";
  member_process stranger{"stranger_caller", environment};
  EXPECT_EQ(stranger.exit_code(20s), 0) << "rank 0 took the stranger's call as member 1's";
  EXPECT_EQ(w.group.rpc_sync("1", 5s, add_numbers, 20, 22), 42) << "rank 1 was repointed";
  w.server.kill_and_collect();
}

} // namespace
} // namespace troupe::testing
