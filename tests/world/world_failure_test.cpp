// Members that die, freeze or never come: nothing waits for ever, and every loss is a typed
// error (peer_lost, timeout_error) that names who was lost.
#include "world_test_support.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>
#include <set>

namespace troupe::testing {
namespace {

/// Records the members this process sees lost, in order. The callback shares the record: the
/// world may report a loss after this recorder is gone.
class loss_recorder {
public:
  explicit loss_recorder(troupe::world& world) {
    world.on_member_lost([record = record_](const std::string& name, int) {
      std::lock_guard guard{record->mutex};
      record->lost.push_back(name);
      record->changed.notify_all();
    });
  }
  /// The n-th member lost, or "" if fewer are reported within `limit`.
  std::string wait(std::chrono::milliseconds limit, std::size_t n = 1) {
    std::unique_lock lock{record_->mutex};
    record_->changed.wait_for(lock, limit, [&] { return record_->lost.size() >= n; });
    return record_->lost.size() >= n ? record_->lost[n - 1] : std::string{};
  }

private:
  struct record {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<std::string> lost;
  };
  std::shared_ptr<record> record_ = std::make_shared<record>();
};

std::vector<std::string> members_of_size(int size) {
  std::vector<std::string> names;
  for (int rank = 0; rank < size; ++rank)
    names.push_back(std::to_string(rank));
  return names;
}

/// Joins, creates the group, then waits to be killed or frozen.
TROUPE_ROLE(victim) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("group", members_of_size(world.size()));
    std::this_thread::sleep_for(60s);
  });
}

/// The members but `lost`.
std::vector<std::string> survivors(int size, const std::string& lost) {
  auto names = members_of_size(size);
  std::erase(names, lost);
  return names;
}

/// Joins, creates the group, expects to see TROUPE_TEST_LOST lost within 10 s, then meets the
/// other survivors; without rank 0 no group can meet, so then it waits for the last to leave.
TROUPE_ROLE(observer) {
  return as_member([](troupe::world& world) {
    loss_recorder losses{world};
    const int formed_with = world.size();
    auto group = world.create_rpc_group("group", members_of_size(formed_with));
    const std::string lost = std::getenv("TROUPE_TEST_LOST");
    require(losses.wait(10s) == lost, "the loss was seen");
    require(world.size() == formed_with - 1, "the lost member is no longer counted");
    if (lost != "0") {
      world.create_rpc_group("survivors", survivors(formed_with, lost)).barrier();
      return;
    }
    // Without rank 0 no group can meet: wait for the test's member (rank 2) to leave.
    wait_until_gone(group, "2");
  });
}

member_process observer_expecting(int rank, int size, int port, const std::string& lost) {
  auto environment = member_environment(rank, size, port);
  environment["TROUPE_TEST_LOST"] = lost;
  return member_process{"observer", environment};
}

class world_failure : public ::testing::Test {
protected:
  int port = free_port();
  troupe::runtime rt;
};

/// Member 2 dies (or freezes) while member 0 waits on a call to it.
/// With `shared_memory` off here, this member's calls go over TCP (the others keep theirs on).
void lose_member_during_call(int port, troupe::runtime& rt, int signal,
                             std::chrono::milliseconds limit, bool shared_memory = true) {
  auto observer = observer_expecting(1, 3, port, "2");
  member_process victim{"victim", member_environment(2, 3, port)};
  {
    auto options = member_options(0, 3, port);
    options.shared_memory = shared_memory;
    troupe::world world{rt, options};
    loss_recorder losses{world};
    auto group = world.create_rpc_group("group", members_of_size(3));
    auto call = group.rpc_async("2", sleep_ms, 30'000);
    std::this_thread::sleep_for(200ms);
    victim.signal(signal);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(call.get(limit), troupe::peer_lost);
    EXPECT_LT(std::chrono::steady_clock::now() - start, limit);
    EXPECT_EQ(losses.wait(1s), "2");
    EXPECT_THROW(group.rpc_sync("2", add_numbers, 1, 2), troupe::peer_lost);
    EXPECT_EQ(group.rpc_sync("1", add_numbers, 1, 2), 3) << "the others still answer";
    world.create_rpc_group("survivors", survivors(3, "2")).barrier();
  }
  EXPECT_EQ(observer.exit_code(30s), 0);
  victim.kill_and_collect(); // a frozen one is killed only now
}

TEST_F(world_failure, a_killed_member_fails_the_call_pending_on_it) {
  lose_member_during_call(port, rt, SIGKILL, 3s);
}

TEST_F(world_failure, a_frozen_member_fails_the_call_pending_on_it) {
  lose_member_during_call(port, rt, SIGSTOP, 6s);
}

TEST_F(world_failure, a_killed_member_fails_the_call_pending_on_it_over_tcp) {
  lose_member_during_call(port, rt, SIGKILL, 3s, false);
}

TEST_F(world_failure, losing_rank_0_fails_every_pending_group_operation) {
  member_process rank0{"victim", member_environment(0, 3, port)};
  auto observer = observer_expecting(1, 3, port, "0");
  {
    troupe::world world{rt, member_options(2, 3, port)};
    auto group = world.create_rpc_group("group", members_of_size(3));
    auto barrier = std::async(std::launch::async, [&] { group.barrier(); });
    std::this_thread::sleep_for(200ms);
    rank0.signal(SIGKILL);
    ASSERT_EQ(barrier.wait_for(3s), std::future_status::ready);
    EXPECT_THROW(barrier.get(), troupe::peer_lost);
    EXPECT_THROW(group.is_paired("anything"), troupe::peer_lost);
    EXPECT_EQ(group.rpc_sync("1", add_numbers, 1, 2), 3) << "the others still answer";
  }
  EXPECT_EQ(observer.exit_code(30s), 0);
}

/// Meets the group's barrier, which must fail within 10 s naming member 1 (killed meanwhile).
TROUPE_ROLE(stranded_at_barrier) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("group", members_of_size(world.size()));
    try {
      group.barrier(10s);
    } catch (const troupe::peer_lost& e) {
      require(std::string{e.what()}.find("member '1'") != std::string::npos,
              "the failure names member 1");
      return;
    }
    require(false, "the barrier failed");
  });
}

/// A member's environment, its barriers along the tree (`along_tree`) or in shared memory.
std::map<std::string, std::string> barrier_environment(int rank, int size, int port,
                                                       bool along_tree) {
  auto environment = member_environment(rank, size, port);
  environment["TROUPE_HOST_BARRIERS"] = along_tree ? "0" : "1";
  return environment;
}

/// Nineteen members; rank 1 never arrives at the barrier and is killed: everyone hears peer_lost.
void expect_a_lost_member_fails_the_barrier_everywhere(troupe::runtime& rt, int port,
                                                       bool along_tree) {
  constexpr int size = 19;
  member_process victim{"victim", barrier_environment(1, size, port, along_tree)};
  std::vector<member_process> stranded;
  for (int rank = 2; rank < size; ++rank)
    stranded.emplace_back("stranded_at_barrier", barrier_environment(rank, size, port, along_tree));
  {
    auto options = member_options(0, size, port);
    options.timeout = 60s;
    options.host_barriers = !along_tree;
    troupe::world world{rt, options};
    auto group = world.create_rpc_group("group", members_of_size(size));
    auto barrier = std::async(std::launch::async, [&] { group.barrier(); });
    std::this_thread::sleep_for(1s); // the others arrive, 17 and 18 at rank 1
    victim.signal(SIGKILL);
    ASSERT_EQ(barrier.wait_for(10s), std::future_status::ready);
    EXPECT_THROW(barrier.get(), troupe::peer_lost);
    for (auto& member : stranded)
      EXPECT_EQ(member.exit_code(30s), 0);
  }
  victim.kill_and_collect();
}

// The barrier's tree has rank 0 at its root, ranks 1..16 below it, and 17 and 18 below rank 1.
// Its children (waiting on their parent), rank 0 (waiting on its child) and the others
// (released by rank 0) all hear peer_lost.
TEST_F(world_failure, a_member_lost_inside_the_barrier_tree_fails_the_barrier_everywhere) {
  expect_a_lost_member_fails_the_barrier_everywhere(rt, port, true);
}

// In shared memory: the first process to hear of the loss marks the barrier failed for all.
TEST_F(world_failure, a_member_lost_before_a_host_barrier_fails_it_everywhere) {
  expect_a_lost_member_fails_the_barrier_everywhere(rt, port, false);
}

/// Rank 0, the barrier tree's root: meets the group's barrier twice, then leaves at once.
TROUPE_ROLE(root_leaving_after_a_barrier) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("group", members_of_size(world.size()));
    group.barrier();
    group.barrier();
  });
}

/// Meets the group's barrier twice: the second must pass, although the root that released it
/// left right after.
TROUPE_ROLE(released_by_a_leaving_root) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("group", members_of_size(world.size()));
    group.barrier();
    group.barrier();
  });
}

// Member 2 is frozen while it waits at the second barrier. This member's calls to it, then the
// root's release, goodbye and down message wait in its sockets; thawed, its actor is still busy
// with the first calls as the rest come in behind them, so the release is taken in just before
// the root's loss. The release was given before the root left: the barrier passes.
TEST_F(world_failure, a_barrier_released_just_before_its_root_leaves_passes_everywhere) {
  member_process root{"root_leaving_after_a_barrier", barrier_environment(0, 3, port, true)};
  member_process released{"released_by_a_leaving_root", barrier_environment(2, 3, port, true)};
  {
    auto options = member_options(1, 3, port);
    options.host_barriers = false; // met along the tree, whose root leaves
    options.shared_memory = false; // the calls to member 2 travel on a connection, as the root's
    troupe::world world{rt, options};
    auto group = world.create_rpc_group("group", members_of_size(3));
    group.barrier();
    std::this_thread::sleep_for(1s); // member 2 arrives at the second barrier
    ASSERT_TRUE(released.freeze());
    std::vector<troupe::async_result<int>> calls;
    for (int i = 0; i < 2000; ++i)
      calls.push_back(group.rpc_async("2", add_numbers, i, 1));
    group.barrier();
    EXPECT_EQ(root.exit_code(20s), 0);
    released.signal(SIGCONT);
    int settled = 0; // answered, or failed as the world ended with its root
    for (int i = 0; i < 2000; ++i)
      try {
        settled += calls[static_cast<std::size_t>(i)].get(20s) == i + 1 ? 1 : 0;
      } catch (const troupe::peer_lost&) {
        ++settled;
      }
    EXPECT_EQ(settled, 2000);
  }
  EXPECT_EQ(released.exit_code(20s), 0) << "its second barrier passed";
}

TEST_F(world_failure, a_joining_member_hears_at_once_that_rank_0_died) {
  member_process rank0{"victim", member_environment(0, 3, port)}; // waits for rank 2, never there
  auto options = member_options(1, 3, port);
  options.timeout = 30s;
  std::thread killer{[&] {
    std::this_thread::sleep_for(1s);
    rank0.signal(SIGKILL);
  }};
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW((troupe::world{rt, options}), troupe::peer_lost);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << "waited out the timeout instead";
  killer.join();
  rank0.kill_and_collect(); // no member lives on to collect its inboxes
}

/// Tries to join; exits 0 if the world formed, 3 if it was refused (invalid_argument), 4 if
/// rank 0 went away or time ran out.
TROUPE_ROLE(claimant) {
  return refused_or_lost_code([] { as_member([](troupe::world&) {}); });
}

/// Two members claim what only one may have; rank 0 waits for a rank that never comes.
void expect_one_refused(int port, troupe::runtime& rt, std::map<std::string, std::string> first,
                        std::map<std::string, std::string> second) {
  member_process a{"claimant", first};
  member_process b{"claimant", second};
  auto options = member_options(0, 3, port);
  options.timeout = 3s;
  expect_timeout_naming(rt, options, "missing ranks: ");
  // Both try at once: whichever rank 0 hears second is refused; the other waits until rank 0
  // gives up.
  std::multiset<int> codes{a.exit_code(30s), b.exit_code(30s)};
  EXPECT_EQ(codes, (std::multiset<int>{3, 4}));
}

// A rank claimed twice fails both claimants and rank 0: tests/security/world_security_test.cpp.

/// Claims rank 1 of a formed world: exits 0 if refused with invalid_argument naming its holder.
TROUPE_ROLE(late_claimant) {
  try {
    as_member([](troupe::world&) {});
  } catch (const troupe::invalid_argument& e) {
    std::cerr << e.what() << "\n";
    return std::string{e.what()}.find("asks for rank 1, held by '1'") != std::string::npos ? 0 : 1;
  }
  return 1;
}

TEST_F(world_failure, a_rank_claimed_after_formation_is_refused_naming_its_holder) {
  member_process first{"claimant", member_environment(1, 2, port)};
  troupe::world world{rt, member_options(0, 2, port)};
  EXPECT_EQ(first.exit_code(10s), 0);
  auto late = member_environment(1, 2, port);
  late["TROUPE_NAME"] = "late";
  member_process second{"late_claimant", late};
  EXPECT_EQ(second.exit_code(20s), 0);
}

/// Reaches its first barrier a second late, then a second barrier.
TROUPE_ROLE(late_to_the_barrier) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("all", world.members());
    std::this_thread::sleep_for(1s);
    group.barrier();
    group.barrier();
  });
}

/// Rank 0 times out at its first barrier, which rank 1 reaches a second late; its second
/// barrier meets rank 1's second.
void expect_a_timed_out_barrier_to_count(troupe::runtime& rt, int port, bool along_tree) {
  member_process late{"late_to_the_barrier", barrier_environment(1, 2, port, along_tree)};
  auto options = member_options(0, 2, port);
  options.host_barriers = !along_tree;
  troupe::world world{rt, options};
  auto group = world.create_rpc_group("all", world.members());
  const auto start = std::chrono::steady_clock::now();
  try {
    group.barrier(200ms);
    ADD_FAILURE() << "the barrier passed without rank 1";
  } catch (const troupe::timeout_error& e) {
    EXPECT_NE(std::string{e.what()}.find("rpc group 'all'"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 900ms);
  group.barrier(10s); // meets rank 1's second: the one that timed out arrived all the same
  EXPECT_EQ(late.exit_code(10s), 0);
}

TEST_F(world_failure, a_barrier_with_a_timeout_fails_naming_the_group_and_still_counts) {
  expect_a_timed_out_barrier_to_count(rt, port, true);
}

TEST_F(world_failure, a_host_barrier_with_a_timeout_fails_naming_the_group_and_still_counts) {
  expect_a_timed_out_barrier_to_count(rt, port, false);
}

/// Rank 0 of a world it does nothing in but serve, until killed.
TROUPE_ROLE(serving_until_killed) {
  return as_member([](troupe::world&) { std::this_thread::sleep_for(60s); });
}

/// Member 2: makes a group with member 1 and meets it, twice (the first while rank 0 runs).
TROUPE_ROLE(pairs_with_member_1) {
  return as_member([](troupe::world& world) {
    world.create_rpc_group("warm", {"1", "2"}, 20s).barrier(20s);
    world.create_rpc_group("pair", {"1", "2"}, 20s).barrier(20s);
  });
}

// A group's creation and its barriers are met among its members: rank 0, frozen meanwhile, is
// not waited for (were it the rendezvous, the creation would wait until rank 0 was found lost,
// and fail with it). Members 1 and 2 meet once before the freeze, so that what follows it (a few
// messages between two processes that are connected and running) fits well within the 3 s after
// which rank 0 is lost, and the world with it, on a loaded machine too.
TEST_F(world_failure, a_group_without_rank_0_is_made_and_met_while_rank_0_is_frozen) {
  for (const bool along_tree : {false, true}) {
    SCOPED_TRACE(along_tree ? "barriers along the tree" : "barriers in shared memory");
    port = free_port();
    member_process zero{"serving_until_killed", barrier_environment(0, 3, port, along_tree)};
    member_process two{"pairs_with_member_1", barrier_environment(2, 3, port, along_tree)};
    {
      auto options = member_options(1, 3, port);
      options.host_barriers = !along_tree;
      troupe::world world{rt, options};
      world.create_rpc_group("warm", {"1", "2"}, 20s).barrier(20s);
      ASSERT_TRUE(zero.freeze());
      auto pair = world.create_rpc_group("pair", {"1", "2"}, 20s);
      pair.barrier(20s);
      zero.signal(SIGCONT);
      EXPECT_EQ(two.exit_code(20s), 0);
    }
    zero.kill_and_collect();
  }
}

/// How many groups' barrier objects /dev/shm holds.
std::size_t barrier_objects() {
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator{"/dev/shm"})
    count += entry.path().filename().string().rfind("troupe.b.", 0) == 0;
  return count;
}

// A creation that timed out here may still complete elsewhere with this member's arrival: its
// barriers' object stays for the others until this member's world stops, and then goes.
TEST_F(world_failure, a_group_creation_that_timed_out_keeps_its_barrier_object_until_stop) {
  member_process one{"serving_until_killed", member_environment(1, 2, port)};
  const auto before = barrier_objects();
  troupe::world world{rt, member_options(0, 2, port)};
  EXPECT_THROW((void)world.create_rpc_group("never", {"0", "1"}, 300ms), troupe::timeout_error);
  EXPECT_EQ(barrier_objects(), before + 1);
  world.stop();
  EXPECT_EQ(barrier_objects(), before);
  one.kill_and_collect();
}

/// Member 1: makes a group with rank 0 two seconds late, and meets it once.
TROUPE_ROLE(pairs_with_rank_0_late) {
  return as_member([](troupe::world& world) {
    std::this_thread::sleep_for(2s);
    world.create_rpc_group("late", {"0", "1"}, 20s).barrier(20s);
  });
}

// A creation that timed out has still arrived; called again, it waits in its place, and the
// group is made once the other member comes.
TEST_F(world_failure, a_group_creation_that_timed_out_may_be_called_again) {
  member_process one{"pairs_with_rank_0_late", member_environment(1, 2, port)};
  troupe::world world{rt, member_options(0, 2, port)};
  EXPECT_THROW((void)world.create_rpc_group("late", {"0", "1"}, 100ms), troupe::timeout_error);
  auto late = world.create_rpc_group("late", {"0", "1"}, 20s);
  late.barrier(20s);
  EXPECT_EQ(one.exit_code(20s), 0);
}

/// Meets the group of all three members at three barriers, each within 10 s.
void meet_three_times(troupe::world& world) {
  auto group = world.create_rpc_group("all", world.members());
  for (int i = 0; i < 3; ++i)
    group.barrier(10s);
}

TROUPE_ROLE(meets_three_times) { return as_member(meet_three_times); }

/// The same, with a /dev/shm of its own (a mount namespace, a fresh tmpfs there), as a member in
/// a container of its own on the same network would have; exits 5 if it cannot make one.
TROUPE_ROLE(meets_three_times_with_its_own_shm) {
  if (::unshare(CLONE_NEWNS) != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=64m") != 0)
    return 5;
  return as_member(meet_three_times);
}

// All three listen on loopback, but member 1 cannot see the others' /dev/shm: each member's
// barrier object lacks someone, so all three meet along the tree instead of waiting for ever.
TEST_F(world_failure, members_that_do_not_share_dev_shm_meet_along_the_tree) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "a /dev/shm of its own needs root (a mount namespace)";
  member_process own{"meets_three_times_with_its_own_shm", member_environment(1, 3, port)};
  member_process two{"meets_three_times", member_environment(2, 3, port)};
  auto options = member_options(0, 3, port);
  options.timeout = 20s;
  std::optional<troupe::world> world;
  try {
    world.emplace(rt, options);
  } catch (const troupe::timeout_error&) {
    if (own.exit_code(10s) == 5)
      GTEST_SKIP() << "needs CAP_SYS_ADMIN for a mount namespace with a /dev/shm of its own";
    throw;
  }
  meet_three_times(*world);
  EXPECT_EQ(own.exit_code(20s), 0) << "member 1 met the barriers";
  EXPECT_EQ(two.exit_code(20s), 0);
}

/// Member 2 of a pair with member 1: meets it once, then, after rank 0 is killed, hears at its
/// next barrier that the world is gone (peer_lost naming rank 0), however the two come to it.
TROUPE_ROLE(pair_member_outliving_rank_0) {
  return as_member([](troupe::world& world) {
    auto pair = world.create_rpc_group("pair", {"1", "2"});
    pair.barrier();
    std::this_thread::sleep_for(1s); // rank 0 is killed meanwhile
    try {
      pair.barrier(30s);
    } catch (const troupe::peer_lost& e) {
      require(std::string{e.what()}.find("member '0'") != std::string::npos, e.what());
      return;
    }
    require(false, "the barrier failed");
  });
}

// Two members meet in shared memory without rank 0; once it is lost, the world is gone for
// both (as along the tree, where no member sends to another any more): neither meets again.
TEST_F(world_failure, rank_0_lost_ends_the_host_barriers_of_groups_without_it) {
  member_process zero{"serving_until_killed", member_environment(0, 3, port)};
  member_process two{"pair_member_outliving_rank_0", member_environment(2, 3, port)};
  troupe::world world{rt, member_options(1, 3, port)};
  auto pair = world.create_rpc_group("pair", {"1", "2"});
  pair.barrier();
  zero.signal(SIGKILL);
  std::this_thread::sleep_for(1500ms); // member 2 is at its barrier, or about to be
  try {
    pair.barrier(30s);
    ADD_FAILURE() << "met without rank 0";
  } catch (const troupe::peer_lost& e) {
    EXPECT_NE(std::string{e.what()}.find("member '0'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(two.exit_code(30s), 0);
  zero.kill_and_collect();
}

/// Calls a 5 s task on rank 0 (over TCP when TROUPE_TEST_TCP is set), which stops meanwhile:
/// exits 0 on peer_lost.
TROUPE_ROLE(slow_caller) {
  troupe::runtime rt;
  auto options = troupe::world_options::from_environment();
  options.timeout = 20s;
  troupe::world world{rt, options};
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  try {
    if (std::getenv("TROUPE_TEST_TCP") != nullptr)
      group.rpc_sync("0", 30s, sleep_ms, 5000); // a timeout goes through the member actors
    else
      group.rpc_sync("0", sleep_ms, 5000);
  } catch (const troupe::peer_lost&) {
    return 0;
  }
  return 1;
}

/// Rank 0 serves a 5 s call from rank 1 and stops 300 ms into it; how long stop() took.
std::chrono::milliseconds stop_while_serving(int port, bool tcp) {
  auto environment = member_environment(1, 2, port);
  if (tcp)
    environment["TROUPE_TEST_TCP"] = "1";
  member_process caller{"slow_caller", environment};
  troupe::runtime rt;
  auto options = member_options(0, 2, port);
  options.stop_grace = 200ms;
  troupe::world world{rt, options};
  world.create_rpc_group("all", world.members()).barrier();
  std::this_thread::sleep_for(300ms); // the call is running here by now
  const auto start = std::chrono::steady_clock::now();
  world.stop();
  const auto took =
    std::chrono::ceil<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  EXPECT_EQ(caller.exit_code(10s), 0) << "the caller did not hear that rank 0 stopped";
  return took;
}

TEST_F(world_failure, stop_waits_for_a_served_call_no_longer_than_stop_grace) {
  EXPECT_LT(stop_while_serving(port, false), 2s) << "through the inboxes";
  EXPECT_LT(stop_while_serving(free_port(), true), 2s) << "through the member actors";
}

TEST_F(world_failure, a_duplicate_name_is_refused) {
  auto first = member_environment(1, 3, port);
  first["TROUPE_NAME"] = "twin";
  auto second = member_environment(2, 3, port);
  second["TROUPE_NAME"] = "twin";
  expect_one_refused(port, rt, first, second);
}

TEST_F(world_failure, the_constructor_names_the_missing_ranks_when_time_runs_out) {
  auto options = member_options(0, 3, port);
  options.timeout = 1s;
  expect_timeout_naming(rt, options, "missing ranks: 1, 2");
}

/// Checks the names a launcher's environment gives.
TROUPE_ROLE(launched) {
  troupe::runtime rt;
  auto options = troupe::world_options::from_environment();
  options.timeout = 20s;
  troupe::world world{rt, options};
  require(world.name() == "rank-" + std::to_string(world.rank()), "the default name");
  require(world.members() == std::vector<std::string>{"rank-0", "rank-1", "rank-2"}, "members");
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  return 0;
}

TEST_F(world_failure, a_world_forms_from_a_launchers_environment) {
  std::vector<member_process> members;
  for (int rank = 1; rank < 3; ++rank)
    members.emplace_back("launched", std::map<std::string, std::string>{
                                       {"OMPI_COMM_WORLD_RANK", std::to_string(rank)},
                                       {"OMPI_COMM_WORLD_SIZE", "3"},
                                       {"TROUPE_ADDRESS", "127.0.0.1:" + std::to_string(port)}});
  auto options = member_options(0, 3, port);
  options.name.clear(); // the default, as the others have it
  {
    troupe::world world{rt, options};
    EXPECT_EQ(world.name(), "rank-0");
    EXPECT_EQ(world.members(), (std::vector<std::string>{"rank-0", "rank-1", "rank-2"}));
    world.create_rpc_group("all", world.members()).barrier();
  }
  expect_clean_exits(members);
}

TEST(world_options_test, from_environment_refuses_what_is_missing_or_malformed) {
  ::unsetenv("TROUPE_RANK");
  ::setenv("TROUPE_WORLD_SIZE", "2", 1);
  EXPECT_THROW(troupe::world_options::from_environment(), troupe::invalid_argument);
  ::setenv("TROUPE_RANK", "one", 1);
  try {
    troupe::world_options::from_environment();
    ADD_FAILURE() << "a malformed rank was accepted";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("TROUPE_RANK"), std::string::npos) << e.what();
  }
  ::setenv("TROUPE_RANK", "1", 1);
  ::setenv("TROUPE_ADDRESS", "10.1.2.3:9200", 1);
  const auto options = troupe::world_options::from_environment();
  EXPECT_EQ(options.rank, 1);
  EXPECT_EQ(options.world_size, 2);
  EXPECT_EQ(options.name, "rank-1");
  EXPECT_EQ(options.address, "10.1.2.3:9200");
  EXPECT_FALSE(options.tls.has_value());
  ::setenv("TROUPE_TLS_CERT", "c.pem", 1);
  try {
    troupe::world_options::from_environment();
    ADD_FAILURE() << "TLS without a key and a CA was accepted";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("TROUPE_TLS_KEY, TROUPE_TLS_CA"), std::string::npos)
      << e.what();
  }
  ::setenv("TROUPE_TLS_KEY", "c.key", 1);
  ::setenv("TROUPE_TLS_CA", "ca.pem", 1);
  const auto tls = troupe::world_options::from_environment().tls;
  ASSERT_TRUE(tls.has_value());
  EXPECT_EQ(tls->certificate, "c.pem");
  EXPECT_EQ(tls->key, "c.key");
  EXPECT_EQ(tls->ca_file, "ca.pem");
  for (const char* name : {"TROUPE_RANK", "TROUPE_WORLD_SIZE", "TROUPE_ADDRESS", "TROUPE_TLS_CERT",
                           "TROUPE_TLS_KEY", "TROUPE_TLS_CA"})
    ::unsetenv(name);
}

TEST(world_options_test, from_environment_reads_the_largest_world_and_any_rank) {
  ::setenv("TROUPE_RANK", "any", 1);
  ::setenv("TROUPE_WORLD_SIZE", "2", 1);
  ::setenv("TROUPE_MAX_WORLD_SIZE", "4", 1);
  ::setenv("TROUPE_NAME", "elastic", 1);
  const auto options = troupe::world_options::from_environment();
  EXPECT_EQ(options.rank, troupe::any_rank);
  EXPECT_EQ(options.max_world_size, 4);
  EXPECT_EQ(options.name, "elastic");
  ::unsetenv("TROUPE_NAME");
  EXPECT_TRUE(troupe::world_options::from_environment().name.empty())
    << "a member that asks for any rank gets no rank-N name (it must name itself)";
  ::setenv("TROUPE_MAX_WORLD_SIZE", "-1", 1);
  try {
    (void)troupe::world_options::from_environment();
    ADD_FAILURE() << "a negative TROUPE_MAX_WORLD_SIZE was taken";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("TROUPE_MAX_WORLD_SIZE"), std::string::npos) << e.what();
  }
  for (const char* name : {"TROUPE_RANK", "TROUPE_WORLD_SIZE", "TROUPE_MAX_WORLD_SIZE"})
    ::unsetenv(name);
}

TEST(world_options_test, from_environment_reads_whether_a_member_rejoins) {
  ::setenv("TROUPE_RANK", "1", 1);
  ::setenv("TROUPE_WORLD_SIZE", "2", 1);
  EXPECT_FALSE(troupe::world_options::from_environment().rejoin) << "off unless asked";
  for (const char* on : {"1", "true", "yes"}) {
    ::setenv("TROUPE_REJOIN", on, 1);
    EXPECT_TRUE(troupe::world_options::from_environment().rejoin) << on;
  }
  ::setenv("TROUPE_REJOIN", "0", 1);
  EXPECT_FALSE(troupe::world_options::from_environment().rejoin);
  ::setenv("TROUPE_REJOIN", "sometimes", 1);
  try {
    (void)troupe::world_options::from_environment();
    ADD_FAILURE() << "TROUPE_REJOIN=sometimes was taken";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("TROUPE_REJOIN"), std::string::npos) << e.what();
  }
  for (const char* name : {"TROUPE_RANK", "TROUPE_WORLD_SIZE", "TROUPE_REJOIN"})
    ::unsetenv(name);
}

TEST(world_options_test, from_environment_reads_where_barriers_meet) {
  ::setenv("TROUPE_RANK", "1", 1);
  ::setenv("TROUPE_WORLD_SIZE", "2", 1);
  EXPECT_TRUE(troupe::world_options::from_environment().host_barriers) << "on unless told";
  ::setenv("TROUPE_HOST_BARRIERS", "0", 1);
  EXPECT_FALSE(troupe::world_options::from_environment().host_barriers);
  ::setenv("TROUPE_HOST_BARRIERS", "maybe", 1);
  try {
    (void)troupe::world_options::from_environment();
    ADD_FAILURE() << "TROUPE_HOST_BARRIERS=maybe was taken";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("TROUPE_HOST_BARRIERS"), std::string::npos) << e.what();
  }
  for (const char* name : {"TROUPE_RANK", "TROUPE_WORLD_SIZE", "TROUPE_HOST_BARRIERS"})
    ::unsetenv(name);
}

TEST_F(world_failure, one_world_per_process_at_a_time) {
  auto options = member_options(0, 1, port);
  {
    troupe::world world{rt, options};
    EXPECT_EQ(world.members(), std::vector<std::string>{"0"});
    EXPECT_THROW((troupe::world{rt, options}), troupe::state_error);
  }
  troupe::world again{rt, options};
  EXPECT_EQ(again.size(), 1);
}

TEST_F(world_failure, bad_options_are_refused_with_their_names) {
  auto options = member_options(0, 1, port);
  options.address = "0.0.0.0:" + std::to_string(port);
  try {
    troupe::world world{rt, options};
    ADD_FAILURE() << "listened beyond loopback without TLS";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("without TLS"), std::string::npos) << e.what();
  }
  options = member_options(3, 2, port);
  EXPECT_THROW((troupe::world{rt, options}), troupe::invalid_argument);
  options = member_options(0, 1, port);
  options.address = "localhost";
  EXPECT_THROW((troupe::world{rt, options}), troupe::invalid_argument);
}

} // namespace
} // namespace troupe::testing
