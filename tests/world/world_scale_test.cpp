// Worlds that grow: members connect to each other on first use, not when the world forms, and
// hear of losses from rank 0; a world of 128 processes forms on this 2-core machine, and one of
// 16 grows to 64 by joins and shrinks back with calls running throughout.
#include "../eventually.hpp"
#include "../process_usage.hpp"
#include "world_test_support.hpp"

#include <csignal>
#include <fstream>
#include <future>

namespace troupe::testing {
namespace {

/// Calls the next member around the ring over TCP (a timeout takes calls off shared memory),
/// then meets everyone at a barrier, twice.
TROUPE_ROLE(ring_member) {
  troupe::runtime rt;
  auto options = troupe::world_options::from_environment();
  options.timeout = 120s;
  options.rpc_threads = 1;
  troupe::world world{rt, options};
  auto group = world.create_rpc_group("ring", world.members());
  const int next = (world.rank() + 1) % world.size();
  require(group.rpc_sync(world.member_name(next), 60s, add_numbers, world.rank(), 1) ==
            world.rank() + 1,
          "the next member's answer");
  group.barrier();
  group.barrier();
  return 0;
}

// Rank 0 listens before the others start: 127 members listening on ports of the kernel's
// choosing could otherwise take the world's port between free_port() and rank 0's listener.
TEST(world_scale, a_world_of_128_processes_forms_calls_around_its_ring_and_meets) {
  const int port = free_port();
  troupe::runtime rt;
  auto options = member_options(0, 128, port);
  options.timeout = 120s;
  auto forming =
    std::async(std::launch::async, [&] { return std::make_unique<troupe::world>(rt, options); });
  for (int i = 0; i < 10'000 && !listening_on(port); ++i)
    std::this_thread::sleep_for(1ms);
  std::vector<member_process> members;
  for (int rank = 1; rank < 128; ++rank)
    members.emplace_back("ring_member", member_environment(rank, 128, port));
  const auto formed = forming.get();
  auto& world = *formed;
  ASSERT_EQ(world.size(), 128);
  auto group = world.create_rpc_group("ring", world.members());
  EXPECT_EQ(group.rpc_sync("1", 60s, add_numbers, 0, 1), 1);
  group.barrier();
  group.barrier();
  for (auto& member : members)
    EXPECT_EQ(member.exit_code(60s), 0);
}

/// The names of the 48 members that join the world of 16 in the test below.
std::string joiner_name(int i) { return "j" + std::to_string(i); }

/// One of the 15 members the world of 16 forms with: meets rank 0 in the group of all members,
/// then, once the world has grown to 64 and shrunk back, again, and serves until rank 0 leaves.
TROUPE_ROLE(elastic_founder) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("elastic", troupe::all_members);
    group.barrier();
    // Asked of rank 0 each time: not too often, with 63 others asking.
    for (int i = 0; i < 1'200 && !group.is_paired("full"); ++i)
      std::this_thread::sleep_for(100ms);
    for (int i = 0; i < 12'000 && world.size() > 16; ++i)
      std::this_thread::sleep_for(10ms);
    require(world.size() == 16, "the world shrank back to 16");
    group.barrier();
    wait_until_gone(group, "0");
  });
}

/// One of 48 members that join the world of 16 at any rank: calls rank 0 and member 1 through
/// the group of all members, and leaves once rank 0 says the world is full.
TROUPE_ROLE(elastic_joiner) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("elastic", troupe::all_members);
    for (int i = 0; i < 10; ++i) {
      require(group.rpc_sync("0", add_numbers, i, 1) == i + 1, "a call to rank 0");
      require(group.rpc_sync("1", add_numbers, i, 2) == i + 2, "a call to member 1");
    }
    for (int i = 0; i < 1'200 && !group.is_paired("full"); ++i)
      std::this_thread::sleep_for(100ms);
    require(group.is_paired("full"), "rank 0 said the world is full");
  });
}

/// Rank 0's calls to every member there is, round after round, until told to stop: how many
/// were answered, and what went wrong otherwise (a joiner that left as it was called is no
/// fault: its call fails with peer_lost; nothing else may fail).
struct calls_throughout {
  std::atomic<bool> full{false}, stop{false};
  std::atomic<int> answered{0}, answered_by_joiners{0}, answered_once_full{0}, raced_a_leave{0};
  std::atomic<int> rounds_of_64{0}; // rounds over 64 members, every call answered
  std::vector<std::string> faults;

  void run(troupe::rpc_group& group) {
    for (int round = 0; !stop; ++round) {
      const auto members = group.members();
      const auto answered_before = answered.load();
      for (const auto& member : members) {
        try {
          if (group.rpc_sync(member, 30s, add_numbers, round, 1) != round + 1)
            faults.push_back(member + " answered wrong");
          ++answered;
          answered_by_joiners += member.starts_with("j");
          answered_once_full += full.load();
        } catch (const troupe::peer_lost& e) {
          if (member.starts_with("j"))
            ++raced_a_leave;
          else
            faults.push_back(member + ": " + e.what());
        } catch (const std::exception& e) {
          faults.push_back(member + ": " + e.what());
        }
      }
      rounds_of_64 += members.size() == 64 && answered - answered_before == 64;
    }
  }
};

// A world of 16 on this host grows to 64 by joins (at any rank) and shrinks back by leaves,
// while rank 0 calls every member there is through a group of all members: every call to a
// member that stays is answered, and only calls to a joiner as it leaves fail (peer_lost).
TEST(world_scale, a_world_of_16_grows_to_64_and_back_with_calls_throughout) {
  const int port = free_port();
  troupe::runtime rt;
  auto options = member_options(0, 16, port);
  options.max_world_size = 64;
  options.timeout = 60s;
  std::vector<member_process> founders;
  for (int rank = 1; rank < 16; ++rank) {
    auto environment = member_environment(rank, 16, port);
    environment["TROUPE_MAX_WORLD_SIZE"] = "64";
    founders.emplace_back("elastic_founder", environment);
  }
  troupe::world world{rt, options};
  auto group = world.create_rpc_group("elastic", troupe::all_members);
  group.barrier();
  calls_throughout calls;
  std::thread caller{[&] { calls.run(group); }};
  std::vector<member_process> joiners;
  for (int i = 16; i < 64; ++i) {
    auto environment = member_environment(1, 16, port);
    environment["TROUPE_RANK"] = "any";
    environment["TROUPE_NAME"] = joiner_name(i);
    environment["TROUPE_MAX_WORLD_SIZE"] = "64";
    joiners.emplace_back("elastic_joiner", environment);
  }
  const bool grew = eventually([&] { return world.size() == 64; }, 120s);
  EXPECT_TRUE(grew) << "the world has " << world.size() << " members";
  EXPECT_EQ(group.members().size(), static_cast<std::size_t>(world.size()));
  EXPECT_TRUE(eventually([&] { return calls.rounds_of_64 > 0; }, 120s))
    << "every member of the world of 64 answered a call";
  calls.full = true;
  group.pair("full", true);
  const bool shrank = eventually([&] { return world.size() == 16; }, 120s);
  calls.stop = true;
  caller.join();
  EXPECT_TRUE(shrank) << "the world has " << world.size() << " members";
  for (auto& joiner : joiners)
    EXPECT_EQ(joiner.exit_code(60s), 0);
  EXPECT_TRUE(calls.faults.empty())
    << calls.faults.size()
    << " faults, the first: " << (calls.faults.empty() ? "" : calls.faults.front());
  EXPECT_GE(calls.answered_by_joiners, 48) << "every joiner was called";
  EXPECT_GT(calls.answered_once_full, 0) << "and members as the joiners left";
  group.barrier(); // the founders, once the world is back to 16
  world.stop();
  expect_clean_exits(founders);
}

/// Member 1: calls member 2 (over TCP), then reports how many TCP connections it has open and
/// waits to be told the test is over.
TROUPE_ROLE(counting_caller) {
  troupe::runtime rt;
  troupe::world world{rt, troupe::world_options::from_environment()};
  auto group = world.create_rpc_group("all", world.members());
  require(group.rpc_sync("2", 10s, add_numbers, 1, 1) == 2, "member 2's answer");
  group.barrier();
  group.barrier(); // the test counted
  return 0;
}

TROUPE_ROLE(quiet_member) {
  troupe::runtime rt;
  troupe::world world{rt, troupe::world_options::from_environment()};
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  group.barrier();
  return 0;
}

// Four members: 1 calls 2, and nobody calls 3. Each member's sockets are its listener and its
// connection to rank 0, plus one each way between 1 and 2.
TEST(world_scale, members_connect_to_each_other_on_first_use_only) {
  const int port = free_port();
  std::vector<member_process> members;
  members.emplace_back("counting_caller", member_environment(1, 4, port));
  members.emplace_back("quiet_member", member_environment(2, 4, port));
  members.emplace_back("quiet_member", member_environment(3, 4, port));
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 4, port)};
  auto group = world.create_rpc_group("all", world.members());
  group.barrier(); // 1 has called 2
  EXPECT_EQ(tcp_sockets(members[0].pid()), 3) << "member 1: listener, rank 0, member 2";
  EXPECT_EQ(tcp_sockets(members[1].pid()), 3) << "member 2: listener, rank 0, member 1";
  EXPECT_EQ(tcp_sockets(members[2].pid()), 2) << "member 3: listener, rank 0";
  group.barrier();
  expect_clean_exits(members);
}

/// Meets the group of every member at three barriers: the test looks at it after the second.
TROUPE_ROLE(barrier_member) {
  troupe::runtime rt;
  troupe::world world{rt, troupe::world_options::from_environment()};
  auto group = world.create_rpc_group("all", world.members());
  for (int i = 0; i < 3; ++i)
    group.barrier();
  return 0;
}

/// Whether process `pid` maps a group's barrier object (host_barrier.hpp).
bool maps_a_barrier_object(int pid) {
  std::ifstream maps{"/proc/" + std::to_string(pid) + "/maps"};
  std::string line;
  while (std::getline(maps, line))
    if (line.find("/dev/shm/troupe.b.") != std::string::npos)
      return true;
  return false;
}

/// Eighteen members make a group and meet at its barriers; member "9", the last by name, whose
/// parent in the group's tree (of the members in the group's order, by name) is member "1", is
/// looked at after the second barrier.
struct member_nine {
  int sockets = 0;
  bool maps_barrier_object = false;
};
member_nine member_nine_after_barriers(bool along_tree) {
  constexpr int size = 18;
  const int port = free_port();
  std::vector<member_process> members;
  for (int rank = 1; rank < size; ++rank) {
    auto environment = member_environment(rank, size, port);
    environment["TROUPE_HOST_BARRIERS"] = along_tree ? "0" : "1";
    members.emplace_back("barrier_member", environment);
  }
  troupe::runtime rt;
  auto options = member_options(0, size, port);
  options.host_barriers = !along_tree;
  troupe::world world{rt, options};
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  group.barrier();
  const member_nine seen{tcp_sockets(members[8].pid()), maps_a_barrier_object(members[8].pid())};
  group.barrier();
  expect_clean_exits(members);
  return seen;
}

// The whole world on this host: barriers meet in shared memory. The group was made along the
// tree: member 9 holds its listener and its connections to rank 0 and to its parent, member 1.
TEST(world_scale, barriers_on_one_host_meet_in_a_shared_memory_object) {
  const auto nine = member_nine_after_barriers(false);
  EXPECT_TRUE(nine.maps_barrier_object);
  EXPECT_EQ(nine.sockets, 3) << "its listener, rank 0 and member 1 (the group's creation)";
}

// Along the tree, as across hosts: no object, and the same connections.
TEST(world_scale, barriers_along_the_tree_use_the_creations_connections) {
  const auto nine = member_nine_after_barriers(true);
  EXPECT_FALSE(nine.maps_barrier_object);
  EXPECT_EQ(nine.sockets, 3) << "its listener, rank 0 and member 1";
}

/// Member 1: never talks to member 2; exits 0 once it hears that 2 was lost.
TROUPE_ROLE(hears_of_a_loss) {
  troupe::runtime rt;
  troupe::world world{rt, troupe::world_options::from_environment()};
  std::atomic<bool> lost{false};
  world.on_member_lost([&](const std::string& name, int) { lost = lost || name == "2"; });
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  for (int i = 0; i < 1000 && !lost; ++i)
    std::this_thread::sleep_for(10ms);
  require(lost, "member 1 heard that member 2 was lost");
  return tcp_sockets(::getpid()) == 2 ? 0 : 3; // and never connected to it
}

// A member without a connection to the lost one hears it from rank 0, which sees every member.
TEST(world_scale, a_member_hears_of_a_loss_from_rank_0) {
  const int port = free_port();
  std::vector<member_process> members;
  members.emplace_back("hears_of_a_loss", member_environment(1, 3, port));
  members.emplace_back("quiet_member", member_environment(2, 3, port));
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 3, port)};
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  members[1].kill_and_collect();
  EXPECT_EQ(members[0].exit_code(20s), 0);
}

/// Member 2: calls member 1 until a call fails; exits 0 if that is peer_lost (it was frozen
/// past the loss bound meanwhile, and resumed).
TROUPE_ROLE(resumed_caller) {
  troupe::runtime rt;
  troupe::world world{rt, troupe::world_options::from_environment()};
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < until) {
    try {
      group.rpc_sync("1", 1s, add_numbers, 1, 1);
    } catch (const troupe::peer_lost&) {
      return 0;
    } catch (const troupe::timeout_error&) {
      continue; // the moment it resumed, before it heard of its loss
    }
    std::this_thread::sleep_for(50ms);
  }
  return 1;
}

// A member frozen past the loss bound is lost to the world; resumed, it does not rejoin: its
// calls fail with peer_lost rather than reach members that have written it off.
TEST(world_scale, a_member_lost_while_frozen_does_not_rejoin_when_it_resumes) {
  const int port = free_port();
  std::vector<member_process> members;
  members.emplace_back("quiet_member", member_environment(1, 3, port));
  members.emplace_back("resumed_caller", member_environment(2, 3, port));
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 3, port)};
  std::atomic<bool> lost{false};
  world.on_member_lost([&](const std::string& name, int) { lost = lost || name == "2"; });
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  std::this_thread::sleep_for(300ms); // some calls from 2 to 1 succeed first
  members[1].signal(SIGSTOP);
  for (int i = 0; i < 1000 && !lost; ++i)
    std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(lost) << "the frozen member was not taken for lost";
  members[1].signal(SIGCONT);
  EXPECT_EQ(members[1].exit_code(30s), 0)
    << "the resumed member's calls did not fail with peer_lost";
  EXPECT_THROW(group.rpc_sync("2", 1s, add_numbers, 1, 1), troupe::peer_lost);
}

// This test is member 1. Its first call to member 2 waits for rank 0 to pass on that 2 should
// connect; rank 0 is frozen, then killed: the call fails with peer_lost at once, rather than at
// the end of the world's timeout, since no member is reached without rank 0.
TEST(world_scale, a_call_waiting_for_its_member_to_be_reached_fails_when_rank_0_is_lost) {
  const int port = free_port();
  std::vector<member_process> members;
  members.emplace_back("quiet_member", member_environment(0, 3, port));
  members.emplace_back("quiet_member", member_environment(2, 3, port));
  troupe::runtime rt;
  troupe::world world{rt, member_options(1, 3, port)};
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  ASSERT_TRUE(members[0].freeze()) << "rank 0 did not stop";
  auto call = group.rpc_async("2", 15s, add_numbers, 1, 2); // a timeout: over TCP
  std::this_thread::sleep_for(200ms); // waiting for rank 0 now
  members[0].signal(SIGKILL);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(call.get(20s), troupe::peer_lost);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

/// Calls every other member at once, over TCP, and checks every answer.
void call_everyone_at_once(troupe::world& world) {
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  std::vector<troupe::async_result<int>> calls;
  for (int rank = 0; rank < world.size(); ++rank)
    if (rank != world.rank())
      calls.push_back(group.rpc_async(world.member_name(rank), 20s, add_numbers, rank, 100));
  int rank = 0;
  for (auto& call : calls) {
    rank += rank == world.rank();
    require(call.get() == rank + 100, "an answer from member " + std::to_string(rank));
    ++rank;
  }
  group.barrier();
}

TROUPE_ROLE(calls_everyone) {
  return as_member([](troupe::world& world) { call_everyone_at_once(world); });
}

// Every pair of members connects both ways at the same moment, which CAF settles by keeping
// one connection: every call is answered, and nothing is taken for a stranger.
TEST(world_scale, members_reaching_each_other_at_once_all_get_their_answers) {
  const int port = free_port();
  auto members = start_members("calls_everyone", 6, port);
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 6, port)};
  call_everyone_at_once(world);
  expect_clean_exits(members);
}

} // namespace
} // namespace troupe::testing
