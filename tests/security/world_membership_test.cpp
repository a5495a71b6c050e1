// Who may be a member of a world, on 127.0.0.1: in a TLS world one member's leaving and a
// stranger's connect-and-close leave the others connected; a world beyond loopback forms with
// every address known; a rank claimed twice fails both claimants and the formation; a member
// whose certificate names another, without TLS in a TLS world or with TLS in a plain one, or
// without the secret, is refused, and a joiner refuses a rank 0 whose certificate does not
// name the address it dialled.
#include "world_security_support.hpp"

namespace troupe::testing {
namespace {

/// A world of two: rank 0 here with `secret`, rank 1 a process with `member_secret`; what the
/// member's process exits with (0 joined, 3 refused). Rank 0 gives up after 4 s.
int join_with_secrets(const std::string& secret, const std::string& member_secret) {
  troupe::runtime rt;
  const int port = free_port();
  auto environment = member_environment(1, 2, port);
  environment["TROUPE_SECRET"] = member_secret;
  member_process joiner{"joining_member", environment};
  auto options = member_options(0, 2, port);
  options.secret = secret;
  options.timeout = 4s;
  try {
    troupe::world world{rt, options};
    world.create_rpc_group("all", world.members()).barrier();
  } catch (const troupe::timeout_error&) {
  }
  return joiner.exit_code(10s);
}

/// The same for a member joining the formed world (of one, taking two): a door of its own, with
/// the same proofs. Rank 0 waits 4 s for it to join.
int join_formed_world_with_secrets(const std::string& secret, const std::string& member_secret) {
  troupe::runtime rt;
  const int port = free_port();
  auto options = member_options(0, 1, port);
  options.max_world_size = 2;
  options.secret = secret;
  troupe::world world{rt, options};
  std::atomic<bool> joined{false};
  world.on_member_joined([&joined](const std::string&, int) { joined = true; });
  auto environment = member_environment(1, 1, port);
  environment["TROUPE_SECRET"] = member_secret;
  environment["TROUPE_MAX_WORLD_SIZE"] = "2";
  member_process joiner{"joining_member", environment};
  for (int i = 0; i < 400 && !joined; ++i)
    std::this_thread::sleep_for(10ms);
  if (joined)
    world.create_rpc_group("all", {"0", "1"}).barrier();
  else
    EXPECT_EQ(world.members(), std::vector<std::string>{"0"}) << "a refused joiner left a trace";
  return joiner.exit_code(10s);
}

TEST(world_membership, a_member_joining_the_formed_world_without_its_secret_is_refused) {
  EXPECT_EQ(join_formed_world_with_secrets("the secret", "not the secret"), 3);
}

TEST(world_membership, a_member_joining_the_formed_world_with_its_secret_is_taken_in) {
  EXPECT_EQ(join_formed_world_with_secrets("the secret", "the secret"), 0);
}

TEST(world_membership, a_tls_world_holds_when_a_member_leaves_and_a_stranger_connects_and_closes) {
  temp_folder certs;
  make_certs(certs.path(), "0=127.0.0.1 1 2");
  troupe::runtime rt;
  const int port = free_port();
  std::vector<member_process> members;
  for (int rank = 1; rank < 3; ++rank) {
    auto environment = member_environment(rank, 3, port);
    environment["TROUPE_TEST_CERTS"] = certs.path();
    members.emplace_back("steady_member", environment);
  }
  auto options = member_options(0, 3, port);
  options.tls = tls_of(certs.path(), "0");
  troupe::world world{rt, options};
  std::atomic<int> lost_others{0};
  world.on_member_lost([&](const std::string& name, int) {
    if (name != "2")
      ++lost_others;
  });
  auto all = world.create_rpc_group("all", world.members());
  all.barrier();
  for (int i = 0; i < 5; ++i) { // no certificate, no TLS: a connection that ends at once
    raw_connection stranger{port};
    stranger.send("GET / HTTP/1.0\r\n\r\n");
  }
  EXPECT_EQ(members[1].exit_code(10s), 0);
  std::this_thread::sleep_for(500ms); // past the 70-170 ms in which every member was lost
  auto pair = world.create_rpc_group("pair", {"0", "1"});
  EXPECT_EQ(pair.rpc_sync("1", add_numbers, 20, 22), 42);
  pair.barrier();
  EXPECT_EQ(members[0].exit_code(10s), 0);
  EXPECT_EQ(lost_others.load(), 0);
}

/// Members listening beyond loopback are reached at the address rank 0 sees them connect from,
/// which rank 0 looks up; the roster must wait for every such address. Rank 0 at 0.0.0.0 takes
/// that path while every connection stays on this machine.
TEST(world_membership, a_tls_world_beyond_loopback_forms_with_every_address_known) {
  temp_folder certs;
  make_certs(certs.path(), "0=0.0.0.0 1 2 3");
  for (int round = 0; round < 4; ++round) {
    troupe::runtime rt;
    const int port = free_port();
    std::vector<member_process> members;
    for (int rank = 1; rank < 4; ++rank) {
      auto environment = member_environment(rank, 4, port);
      environment["TROUPE_ADDRESS"] = "0.0.0.0:" + std::to_string(port);
      environment["TROUPE_TEST_CERTS"] = certs.path();
      members.emplace_back("joining_member", environment);
    }
    auto options = member_options(0, 4, port);
    options.address = "0.0.0.0:" + std::to_string(port);
    options.tls = tls_of(certs.path(), "0");
    troupe::world world{rt, options};
    world.create_rpc_group("all", world.members()).barrier();
    for (auto& member : members)
      EXPECT_EQ(member.exit_code(20s), 0) << "round " << round;
  }
}

TEST(world_membership, a_rank_claimed_twice_fails_both_claimants_naming_both) {
  troupe::runtime rt;
  const int port = free_port();
  std::vector<member_process> claimants;
  for (const auto* name : {"first", "second"}) {
    auto environment = member_environment(1, 3, port); // rank 2 never comes
    environment["TROUPE_NAME"] = name;
    claimants.emplace_back("joining_member", environment);
  }
  auto options = member_options(0, 3, port);
  try {
    troupe::world world{rt, options};
    ADD_FAILURE() << "the world formed";
  } catch (const troupe::invalid_argument& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("'first'"), std::string::npos) << text;
    EXPECT_NE(text.find("'second'"), std::string::npos) << text;
  }
  for (auto& claimant : claimants)
    EXPECT_EQ(claimant.exit_code(10s), 3);
}

TEST(world_membership, a_member_whose_certificate_names_another_is_refused) {
  temp_folder certs;
  make_certs(certs.path(), "0=127.0.0.1 1 impostor");
  expect_tls_member_refused(certs.path(), "impostor"); // member "1" shows the impostor's
}

TEST(world_membership, a_joiner_refuses_a_rank_0_whose_certificate_does_not_name_its_address) {
  temp_folder certs;
  make_certs(certs.path(), "0 1"); // rank 0's certificate names "0", not 127.0.0.1
  expect_tls_member_refused(certs.path(), "1");
}

TEST(world_membership, a_member_with_tls_is_refused_promptly_by_a_world_without) {
  temp_folder certs;
  make_certs(certs.path(), "0=127.0.0.1 1");
  troupe::runtime rt;
  const int port = free_port();
  auto environment = member_environment(1, 2, port);
  environment["TROUPE_TEST_CERTS"] = certs.path();
  member_process joiner{"joining_member", environment};
  std::thread rank0{[&] {
    auto options = member_options(0, 2, port);
    options.timeout = 8s;
    EXPECT_THROW((troupe::world{rt, options}), troupe::timeout_error);
  }};
  // Well before rank 0 gives up: the joiner is told, not left to wait out its timeout.
  EXPECT_EQ(joiner.exit_code(5s), 3);
  rank0.join();
}

TEST(world_membership, a_member_without_the_worlds_secret_is_refused) {
  EXPECT_EQ(join_with_secrets("the secret", "not the secret"), 3);
}

TEST(world_membership, members_with_the_secret_work_together) {
  EXPECT_EQ(join_with_secrets("the secret", "the secret"), 0);
}

} // namespace
} // namespace troupe::testing
