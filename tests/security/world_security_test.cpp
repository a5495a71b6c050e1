// Worlds against strangers and failing members, on 127.0.0.1: in a TLS world one member's
// leaving and a stranger's connect-and-close leave the others connected; a rank claimed twice
// fails both claimants and the formation, naming both; a member whose certificate does not name
// it, or without the world's secret, is refused; a stranger's call on a formed world is refused.
#include "stranger.hpp"

#include "../distributed/world_test_support.hpp"
#include "../process_usage.hpp"

#include "member_messages.hpp"

#include "troupe/actors/network.hpp"
#include "troupe/actors/runtime_state.hpp"

#include <malloc.h>

#include <atomic>
#include <cstdlib>

namespace troupe::testing {
namespace {

troupe::tls_options tls_of(const std::string& folder, const std::string& name) {
  return {folder + "/" + name + ".pem", folder + "/" + name + ".key", folder + "/ca.pem", {}};
}

void make_certs(const std::string& folder, const std::string& names) {
  const auto command = std::string{TROUPE_MAKE_CERTS} + " " + folder + " " + names;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

/// Options from the environment, with TLS from TROUPE_TEST_CERTS (the certificate named by
/// TROUPE_TEST_CERT_NAME, else by the member's name) and the secret from TROUPE_SECRET.
troupe::world_options options_from_environment() {
  auto options = troupe::world_options::from_environment();
  options.timeout = 20s;
  if (const char* folder = std::getenv("TROUPE_TEST_CERTS"); folder && *folder) {
    const char* cert = std::getenv("TROUPE_TEST_CERT_NAME");
    options.tls = tls_of(folder, cert && *cert ? cert : options.name);
  }
  return options;
}

/// Rank 2 leaves right after the first barrier; rank 1 waits for rank 0 (which meanwhile lets a
/// stranger connect and close) and then calls it: exits 5 if any member but rank 2 was lost.
TROUPE_ROLE(steady_member) {
  return refused_or_lost_code([] {
    troupe::runtime rt;
    troupe::world world{rt, options_from_environment()};
    std::atomic<bool> other_lost{false};
    world.on_member_lost([&](const std::string& name, int) {
      if (name != "2")
        other_lost = true;
    });
    auto all = world.create_rpc_group("all", world.members());
    all.barrier();
    if (world.rank() == 2)
      return;
    auto pair = world.create_rpc_group("pair", {"0", "1"});
    require(pair.rpc_sync("0", add_numbers, 2, 3) == 5, "a call to rank 0 after rank 2 left");
    pair.barrier();
    if (other_lost)
      std::exit(5);
  });
}

TROUPE_TASK(make_block, [](int mib) { return std::vector<char>(std::size_t(mib) << 20, 'x'); });

/// Keeps a 64 MiB outcome on rank 0 (a remote reference), says so with a barrier, and waits to
/// be killed.
TROUPE_ROLE(keeper) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("all", world.members());
    group.barrier();
    auto block = group.remote("0", make_block, 64);
    group.barrier();
    std::this_thread::sleep_for(60s);
  });
}

/// A process that is no member: reaches rank 0 (no secret is set, so it gets past the
/// handshake) and asks it to run a task. Exits 0 if rank 0 refused the call as a non-member's,
/// 1 if it ran it, 2 if no answer came.
TROUPE_ROLE(stranger_caller) {
  troupe::runtime rt;
  auto& state = troupe::runtime_state_of(rt);
  const auto at = troupe::detail::parse_endpoint(std::getenv("TROUPE_ADDRESS"), "address");
  auto rank0 = troupe::detail::connect(state, at, {.name = "stranger"},
                                       std::chrono::steady_clock::now() + 10s);
  caf::scoped_actor self{*state.system};
  int code = 2;
  self
    ->request(rank0, 5s, troupe::detail::call_atom::value,
              static_cast<std::uint8_t>(troupe::detail::call_kind::task), std::string{"g"},
              std::string{}, std::string{"add_numbers"}, std::string{},
              troupe::detail::to_wire(troupe::serialize(std::tuple{1, 2})))
    .receive(
      [&](std::uint8_t status, std::string& text, troupe::detail::wire_bytes&) {
        std::cerr << "rank 0 answered: " << text << "\n";
        code = status == static_cast<std::uint8_t>(troupe::detail::reply_status::state_error) &&
                   text.find("members only") != std::string::npos
                 ? 0
                 : 1;
      },
      [](caf::error&) {});
  return code;
}

/// A process that is no member tells rank 0 that member 1 is leaving, as member 1 would.
TROUPE_ROLE(stranger_leaver) {
  troupe::runtime rt;
  auto& state = troupe::runtime_state_of(rt);
  const auto at = troupe::detail::parse_endpoint(std::getenv("TROUPE_ADDRESS"), "address");
  auto rank0 = troupe::detail::connect(state, at, {.name = "1"},
                                       std::chrono::steady_clock::now() + 10s);
  caf::scoped_actor self{*state.system};
  self->send(rank0, troupe::detail::leave_atom::value, std::int32_t{1});
  std::this_thread::sleep_for(300ms);
  return 0;
}

/// A process that is no member says hello to rank 0 as rank 1: exits 0 if refused.
TROUPE_ROLE(stranger_hello) {
  troupe::runtime rt;
  auto& state = troupe::runtime_state_of(rt);
  const auto at = troupe::detail::parse_endpoint(std::getenv("TROUPE_ADDRESS"), "address");
  auto rank0 = troupe::detail::connect(state, at, {.name = "1"},
                                       std::chrono::steady_clock::now() + 10s);
  caf::scoped_actor self{*state.system};
  int code = 2;
  self
    ->request(rank0, 5s, troupe::detail::hello_atom::value, std::int32_t{1},
              caf::actor_cast<caf::actor>(self))
    .receive(
      [&](std::uint8_t status, std::string&, troupe::detail::wire_bytes&) {
        code = status == static_cast<std::uint8_t>(troupe::detail::reply_status::ok) ? 1 : 0;
      },
      [](caf::error&) {});
  return code;
}

/// Joins and waits; exits 3 if refused.
TROUPE_ROLE(joining_member) {
  return refused_or_lost_code([] {
    troupe::runtime rt;
    troupe::world world{rt, options_from_environment()};
    world.create_rpc_group("all", world.members()).barrier();
  });
}

TEST(world_security, a_tls_world_holds_when_a_member_leaves_and_a_stranger_connects_and_closes) {
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
TEST(world_security, a_tls_world_beyond_loopback_forms_with_every_address_known) {
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

TEST(world_security, a_rank_claimed_twice_fails_both_claimants_naming_both) {
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

TEST(world_security, a_member_whose_certificate_names_another_is_refused) {
  temp_folder certs;
  make_certs(certs.path(), "0=127.0.0.1 1 impostor");
  troupe::runtime rt;
  const int port = free_port();
  auto environment = member_environment(1, 2, port);
  environment["TROUPE_TEST_CERTS"] = certs.path();
  environment["TROUPE_TEST_CERT_NAME"] = "impostor"; // claims to be "1"
  member_process joiner{"joining_member", environment};
  auto options = member_options(0, 2, port);
  options.tls = tls_of(certs.path(), "0");
  options.timeout = 4s;
  EXPECT_THROW((troupe::world{rt, options}), troupe::timeout_error);
  EXPECT_EQ(joiner.exit_code(10s), 3);
}

TEST(world_security, what_a_lost_member_kept_is_freed) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's quarantine keeps freed memory resident";
#endif
  troupe::runtime rt;
  const int port = free_port();
  auto members = start_members("keeper", 2, port);
  troupe::world world{rt, member_options(0, 2, port)};
  std::atomic<bool> lost{false};
  world.on_member_lost([&](const std::string&, int) { lost = true; });
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  const long before = resident_kib();
  group.barrier();
  EXPECT_GT(resident_kib() - before, 48 * 1024) << "the kept outcome is not here";
  members[0].kill_and_collect();
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (!lost && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(lost);
  EXPECT_LT(resident_kib() - before, 16 * 1024) << "the lost member's kept outcome stayed";
}

TEST(world_security, a_stranger_cannot_call_a_task_on_a_formed_world) {
  troupe::runtime rt;
  const int port = free_port();
  troupe::world world{rt, member_options(0, 1, port)};
  member_process stranger{"stranger_caller", member_environment(1, 2, port)};
  EXPECT_EQ(stranger.exit_code(20s), 0);
}

TEST(world_security, a_member_with_tls_is_refused_promptly_by_a_world_without) {
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

/// Serves the others' calls until the test kills it.
TROUPE_ROLE(patient_server) {
  return as_member([](troupe::world& world) {
    world.create_rpc_group("all", world.members()).barrier();
    std::this_thread::sleep_for(60s);
  });
}

TEST(world_security, one_member_cannot_queue_calls_on_another_without_bound) {
  troupe::runtime rt;
  const int port = free_port();
  member_process server{"patient_server", member_environment(1, 2, port)};
  troupe::world world{rt, member_options(0, 2, port)};
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  // Calls with a timeout travel over TCP; four threads serve them, a second each.
  std::vector<troupe::async_result<int>> calls;
  for (int i = 0; i < 16'400; ++i)
    calls.push_back(group.rpc_async("1", 60s, sleep_ms, 1000));
  try {
    calls.back().get(20s);
    ADD_FAILURE() << "the 16,400th call was queued";
  } catch (const troupe::state_error& e) {
    EXPECT_NE(std::string{e.what()}.find("calls waiting or running"), std::string::npos)
      << e.what();
  }
  server.kill_and_collect();
}

TEST(world_security, one_member_cannot_keep_outcomes_on_another_without_bound) {
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 1, free_port())};
  auto group = world.create_rpc_group("self", world.members());
  std::vector<troupe::remote_ref<int>> refs;
  refs.reserve(65'536);
  for (int i = 0; i < 65'536; ++i)
    refs.push_back(group.remote("0", add_numbers, i, 1));
  try {
    group.remote("0", add_numbers, 1, 1);
    ADD_FAILURE() << "a 65,537th outcome was kept";
  } catch (const troupe::state_error& e) {
    EXPECT_NE(std::string{e.what()}.find("release some"), std::string::npos) << e.what();
  }
  refs.pop_back(); // releasing one makes room for one
  EXPECT_EQ(group.remote("0", add_numbers, 2, 2).to_here(), 4);
}

TEST(world_security, a_forged_leave_does_not_hide_a_members_loss) {
  troupe::runtime rt;
  const int port = free_port();
  member_process member{"patient_server", member_environment(1, 2, port)};
  troupe::world world{rt, member_options(0, 2, port)};
  std::atomic<bool> lost{false};
  world.on_member_lost([&](const std::string& name, int) { lost = lost || name == "1"; });
  world.create_rpc_group("all", world.members()).barrier();
  member_process stranger{"stranger_leaver", member_environment(1, 2, port)};
  EXPECT_EQ(stranger.exit_code(20s), 0);
  member.kill_and_collect();
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (!lost && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(lost) << "member 1's loss went unreported after a stranger said it was leaving";
}

TEST(world_security, a_forged_hello_does_not_repoint_a_rank) {
  troupe::runtime rt;
  const int port = free_port();
  member_process member{"patient_server", member_environment(1, 2, port)};
  troupe::world world{rt, member_options(0, 2, port)};
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  member_process stranger{"stranger_hello", member_environment(1, 2, port)};
  EXPECT_EQ(stranger.exit_code(20s), 0) << "rank 0 took the stranger's hello";
  EXPECT_EQ(group.rpc_sync("1", 5s, add_numbers, 20, 22), 42) << "rank 1 was repointed";
  member.kill_and_collect();
}

TEST(world_security, a_joiner_refuses_a_rank_0_whose_certificate_does_not_name_its_address) {
  temp_folder certs;
  make_certs(certs.path(), "0 1"); // rank 0's certificate names "0", not 127.0.0.1
  troupe::runtime rt;
  const int port = free_port();
  auto environment = member_environment(1, 2, port);
  environment["TROUPE_TEST_CERTS"] = certs.path();
  member_process joiner{"joining_member", environment};
  auto options = member_options(0, 2, port);
  options.tls = tls_of(certs.path(), "0");
  options.timeout = 4s;
  EXPECT_THROW((troupe::world{rt, options}), troupe::timeout_error);
  EXPECT_EQ(joiner.exit_code(10s), 3);
}

TEST(world_security, an_answered_call_holds_no_memory_until_its_timeout) {
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 1, free_port())};
  auto group = world.create_rpc_group("self", world.members());
  for (int i = 0; i < 1000; ++i) // warm up: the tables reach their steady size
    group.rpc_sync("0", 600s, add_numbers, i, 1);
  const auto before = mallinfo2().uordblks;
  for (int i = 0; i < 50'000; ++i)
    ASSERT_EQ(group.rpc_sync("0", 600s, add_numbers, i, 1), i + 1);
  const auto grown = static_cast<long>(mallinfo2().uordblks) - static_cast<long>(before);
  EXPECT_LT(grown, 2L << 20) << "50,000 answered calls still hold " << grown << " bytes";
}

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

TEST(world_security, a_member_without_the_worlds_secret_is_refused) {
  EXPECT_EQ(join_with_secrets("the secret", "not the secret"), 3);
}

TEST(world_security, members_with_the_secret_work_together) {
  EXPECT_EQ(join_with_secrets("the secret", "the secret"), 0);
}

} // namespace
} // namespace troupe::testing
