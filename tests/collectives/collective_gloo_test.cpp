// Collective groups on gloo, with 3 processes on 127.0.0.1: this test is member
// "0" and starts members "1" and "2".
#include "../world/world_test_support.hpp"
#include "collective_cases.hpp"

#include <csignal>
#include <cstdlib>

namespace troupe::testing {
namespace {

TROUPE_ROLE(collective_member) {
  return as_member([](troupe::world& world) { run_collective_cases(world, {}); });
}

/// Forms a world at 0.0.0.0 (allow_insecure) and tries a gloo group: exits 3 when refused with
/// invalid_argument.
TROUPE_ROLE(wildcard_collective_member) {
  troupe::runtime rt;
  auto options = troupe::world_options::from_environment();
  options.allow_insecure = true;
  options.timeout = 20s;
  troupe::world world{rt, options};
  try {
    troupe::create_collective_group(world, {0, 1}, {.timeout = std::chrono::milliseconds{5000}});
  } catch (const troupe::invalid_argument&) {
    return 3;
  }
  return 0;
}

// Rank 0 at 0.0.0.0: the world is not on loopback, yet every connection here runs over it, so
// the address a member would give gloo is a loopback one the world's other hosts could not
// reach. Group creation says so at once, with the fix.
TEST(collective_gloo, a_member_that_would_advertise_loopback_beyond_it_is_refused) {
  const int port = free_port();
  auto environment = member_environment(1, 2, port);
  environment["TROUPE_ADDRESS"] = "0.0.0.0:" + std::to_string(port);
  member_process member{"wildcard_collective_member", environment};
  troupe::runtime rt;
  auto options = member_options(0, 2, port);
  options.address = "0.0.0.0:" + std::to_string(port);
  options.allow_insecure = true;
  troupe::world world{rt, options};
  try {
    troupe::create_collective_group(world, {0, 1}, {.timeout = std::chrono::milliseconds{5000}});
    ADD_FAILURE() << "a group advertising loopback formed";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("collective_options::interface"), std::string::npos)
      << e.what();
  }
  EXPECT_EQ(member.exit_code(20s), 3);
}

// A one-member world: the address is chosen before anything is sent, so a bad choice fails at
// once, naming what chose it.
TEST(collective_gloo, an_interface_this_host_lacks_is_refused_naming_where_it_came_from) {
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 1, free_port())};
  try {
    troupe::create_collective_group(world, {0}, {.interface = "nosuch0"});
    ADD_FAILURE() << "a group formed on an interface that does not exist";
  } catch (const troupe::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("collective_options::interface names interface 'nosuch0'"),
              std::string::npos)
      << what;
    EXPECT_NE(what.find(" lo"), std::string::npos) << "lists the host's interfaces: " << what;
  }
  ::setenv("TROUPE_SOCKET_IFNAME", "nosuch1", 1);
  try {
    troupe::create_collective_group(world, {0});
    ADD_FAILURE() << "a group formed on an interface that does not exist";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("TROUPE_SOCKET_IFNAME names interface 'nosuch1'"),
              std::string::npos)
      << e.what();
  }
  ::unsetenv("TROUPE_SOCKET_IFNAME");
}

TROUPE_ROLE(member_on_lo) {
  return as_member([](troupe::world& world) {
    auto group = troupe::create_collective_group(world, {0, 1}, {.interface = "lo"});
    std::vector<int> t(1000, 1);
    group->all_reduce(t);
    require(t[999] == 2, "the all_reduce over lo summed two members");
  });
}

TEST(collective_gloo, a_group_forms_on_the_interface_named) {
  const int port = free_port();
  member_process member{"member_on_lo", member_environment(1, 2, port)};
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 2, port)};
  ::setenv("TROUPE_SOCKET_IFNAME", "lo", 1);
  auto group = troupe::create_collective_group(world, {0, 1});
  ::unsetenv("TROUPE_SOCKET_IFNAME");
  std::vector<int> t(1000, 1);
  group->all_reduce(t);
  EXPECT_EQ(t[999], 2);
  EXPECT_EQ(member.exit_code(20s), 0);
}

/// The environment of member `rank` of a world of two that takes up to three, on `port`.
std::map<std::string, std::string> growing_member(int rank, int port) {
  auto environment = member_environment(rank, 2, port);
  environment["TROUPE_MAX_WORLD_SIZE"] = "3";
  return environment;
}

/// Sums ones over `group`: how many members took part.
int members_summed(troupe::collective_group& group) {
  std::vector<int> t(1000, 1);
  group.all_reduce(t);
  return t[999];
}

/// Member 1 of the world of two: a group with rank 0, then, once member 2 has joined, one of
/// all three.
TROUPE_ROLE(collective_founder) {
  return as_member([](troupe::world& world) {
    auto pair = troupe::create_collective_group(world, {0, 1});
    require(members_summed(*pair) == 2, "the group of two");
    for (int i = 0; i < 2000 && world.size() < 3; ++i)
      std::this_thread::sleep_for(10ms);
    auto three = troupe::create_collective_group(world, {0, 1, 2});
    require(members_summed(*three) == 3, "the group with the joiner");
  });
}

/// Member 2, joining the formed world: makes the group of all three.
TROUPE_ROLE(collective_joiner) {
  return as_member([](troupe::world& world) {
    auto three = troupe::create_collective_group(world, {0, 1, 2});
    require(members_summed(*three) == 3, "the joiner's group");
  });
}

// Collective groups keep their ranks; a new one may take in a member that joined the formed
// world, although the others made groups before it came (their names are counted per set of
// ranks, so they agree with the joiner's).
TEST(collective_gloo, a_new_group_takes_in_a_member_that_joined_the_world) {
  const int port = free_port();
  member_process founder{"collective_founder", growing_member(1, port)};
  troupe::runtime rt;
  auto options = member_options(0, 2, port);
  options.max_world_size = 3;
  troupe::world world{rt, options};
  auto pair = troupe::create_collective_group(world, {0, 1});
  EXPECT_EQ(members_summed(*pair), 2);
  EXPECT_THROW((void)troupe::create_collective_group(world, {0, 2}), troupe::invalid_argument)
    << "no member holds rank 2 yet";
  member_process joiner{"collective_joiner", growing_member(2, port)};
  for (int i = 0; i < 2000 && world.size() < 3; ++i)
    std::this_thread::sleep_for(10ms);
  ASSERT_EQ(world.size(), 3);
  auto three = troupe::create_collective_group(world, {0, 1, 2});
  EXPECT_EQ(members_summed(*three), 3);
  EXPECT_EQ(joiner.exit_code(20s), 0);
  EXPECT_EQ(founder.exit_code(20s), 0);
}

TEST(collective_gloo, machin_cases_on_three_processes) {
  const int port = free_port();
  auto members = start_members("collective_member", 3, port);
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 3, port)};
  EXPECT_NO_THROW(run_collective_cases(world, {}));
  expect_clean_exits(members);
}

/// all_reduce of 1 MiB until it throws; how it failed.
std::string all_reduce_until_it_fails(troupe::collective_group& group, int& rounds) {
  std::vector<float> t(1 << 18, 1.0f);
  try {
    for (rounds = 0;; ++rounds)
      group.all_reduce(t);
  } catch (const troupe::peer_lost&) {
    return "peer_lost";
  } catch (const troupe::timeout_error&) {
    return "timeout_error";
  } catch (const std::exception& e) {
    return std::string{"other: "} + e.what();
  }
}

const troupe::collective_options short_timeout{.timeout = std::chrono::milliseconds{4000}};

TROUPE_ROLE(collective_victim) {
  return as_member([](troupe::world& world) {
    auto group = troupe::create_collective_group(world, {0, 1, 2}, short_timeout);
    int rounds = 0;
    all_reduce_until_it_fails(*group,
                              rounds); // until the test kills this process
  });
}

TROUPE_ROLE(collective_survivor) {
  return as_member([](troupe::world& world) {
    auto group = troupe::create_collective_group(world, {0, 1, 2}, short_timeout);
    int rounds = 0;
    const auto how = all_reduce_until_it_fails(*group, rounds);
    require(how == "peer_lost" || how == "timeout_error", "survivor failed with " + how);
  });
}

TEST(collective_gloo, a_rank_killed_mid_all_reduce_fails_the_others) {
  const int port = free_port();
  std::vector<member_process> members;
  members.emplace_back("collective_survivor", member_environment(1, 3, port));
  members.emplace_back("collective_victim", member_environment(2, 3, port));
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 3, port)};
  auto group = troupe::create_collective_group(world, {0, 1, 2}, short_timeout);
  ASSERT_TRUE(group);
  std::vector<float> t(1 << 18, 1.0f);
  for (int i = 0; i < 5; ++i)
    group->all_reduce(t);
  std::thread killer{[&] {
    std::this_thread::sleep_for(50ms);
    members[1].signal(SIGKILL);
  }};
  int rounds = 0;
  const auto how = all_reduce_until_it_fails(*group, rounds);
  killer.join();
  EXPECT_TRUE(how == "peer_lost" || how == "timeout_error") << how;
  EXPECT_THROW(group->barrier(), troupe::state_error) << "a broken group says so";
  EXPECT_EQ(members[0].exit_code(30s), 0) << "the survivor saw the loss too";
  EXPECT_EQ(members[1].exit_code(5s), 128 + SIGKILL);
}

const troupe::collective_options forming_timeout{.timeout = std::chrono::milliseconds{8000}};

/// Creates a group with a member the test freezes while it forms: exits 0 when creation fails
/// with peer_lost naming member '2'.
TROUPE_ROLE(forming_survivor) {
  return as_member([](troupe::world& world) {
    try {
      troupe::create_collective_group(world, {0, 1, 2}, forming_timeout);
    } catch (const troupe::peer_lost& e) {
      require(std::string{e.what()}.find("'2'") != std::string::npos,
              std::string{"peer_lost names the frozen member: "} + e.what());
      return;
    }
    require(false, "the group formed without its frozen member");
  });
}

TROUPE_ROLE(forming_victim) {
  return as_member([](troupe::world& world) {
    troupe::create_collective_group(world, {0, 1, 2},
                                    forming_timeout); // frozen in here by the test
  });
}

// The victim asks rank 0 to meet the others (it calls create_collective_group as soon as the
// world forms) and is frozen before it makes its gloo pairs: the others meet, publish their
// addresses and wait for its own. They fail with peer_lost naming it once the world takes it
// for lost, within the group's timeout; every later wait of the creation (a pair's connection,
// which gloo by itself waits five times the timeout for) ends by the same deadline.
TEST(collective_gloo, a_member_frozen_while_the_group_forms_fails_the_others_naming_it) {
  const int port = free_port();
  std::vector<member_process> members;
  members.emplace_back("forming_survivor", member_environment(1, 3, port));
  members.emplace_back("forming_victim", member_environment(2, 3, port));
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 3, port)};
  std::this_thread::sleep_for(500ms); // the others are waiting at rank 0's rendezvous by now
  ASSERT_TRUE(members[1].freeze());
  const auto start = std::chrono::steady_clock::now();
  try {
    troupe::create_collective_group(world, {0, 1, 2}, forming_timeout);
    ADD_FAILURE() << "the group formed without its frozen member";
  } catch (const troupe::peer_lost& e) {
    EXPECT_NE(std::string{e.what()}.find("'2'"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, forming_timeout.timeout + 3s);
  EXPECT_EQ(members[0].exit_code(20s), 0);
  members[1].kill_and_collect();
}

} // namespace
} // namespace troupe::testing
