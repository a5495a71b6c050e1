// A group's barriers met in shared memory when its whole world is on one host
// (world/src/host_barrier.hpp). Here its members are threads of this process, each with its own
// mapping of the object, as processes would have; the world's own tests meet it across processes.
#include "host_barrier.hpp" // world/src
#include "member_processes.hpp"

#include "troupe/actors/error.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <set>
#include <thread>
#include <vector>

namespace troupe::detail {
namespace {

using namespace std::chrono_literals;
using outcome = host_barrier::outcome;

/// A world id of this test's own, so that runs side by side do not share objects.
std::string fresh_world() {
  static std::atomic<int> made{0};
  return "test" + std::to_string(::getpid()) + "x" + std::to_string(made++);
}

/// Names in /dev/shm of world `world`'s barrier objects.
std::set<std::string> objects_of(const std::string& world) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator{"/dev/shm"})
    if (entry.path().filename().string().rfind("troupe.b." + world + ".", 0) == 0)
      names.insert(entry.path().filename().string());
  return names;
}

/// The membership as a test sets it: `gone` holds the ranks gone, `stopped` says the world stopped.
struct membership {
  std::atomic<int> gone{-1};
  std::atomic<bool> stopped{false};
  host_barrier::watch looks() {
    return {[this](const std::vector<int>& ranks) -> std::optional<int> {
              const int rank = gone.load();
              for (const int each : ranks)
                if (each == rank)
                  return rank;
              return std::nullopt;
            },
            [this] { return stopped.load(); }};
  }
};

/// The group's members, ranks 0..n-1, each its own mapping.
std::vector<std::shared_ptr<host_barrier>> open_group(const std::string& world, int n,
                                                      const std::string& group = "g") {
  std::vector<int> ranks;
  for (int rank = 0; rank < n; ++rank)
    ranks.push_back(rank);
  std::vector<std::shared_ptr<host_barrier>> members;
  for (int rank = 0; rank < n; ++rank)
    members.push_back(host_barrier::open(world, group, ranks, rank));
  return members;
}

TEST(host_barrier, no_member_passes_a_barrier_before_every_member_reached_it) {
  constexpr int members = 8, barriers = 200;
  const auto world = fresh_world();
  auto group = open_group(world, members);
  membership state;
  std::atomic<int> arrivals{0};
  std::atomic<int> early{0};
  std::vector<std::thread> threads;
  for (int rank = 0; rank < members; ++rank)
    threads.emplace_back([&, rank] {
      for (int n = 1; n <= barriers; ++n) {
        arrivals.fetch_add(1);
        if (group[static_cast<std::size_t>(rank)]->meet(static_cast<std::uint64_t>(n), std::nullopt,
                                                        state.looks()) != outcome::met)
          early.fetch_add(1000);
        if (arrivals.load() < n * members)
          early.fetch_add(1); // passed n before everyone had arrived at it
      }
    });
  for (auto& thread : threads)
    thread.join();
  EXPECT_EQ(early.load(), 0);
  EXPECT_EQ(arrivals.load(), members * barriers);
  group.front()->unlink();
  EXPECT_TRUE(objects_of(world).empty());
}

TEST(host_barrier, a_member_that_timed_out_has_arrived_and_meets_the_next_with_the_others) {
  const auto world = fresh_world();
  auto group = open_group(world, 2);
  membership state;
  EXPECT_EQ(group[0]->meet(1, std::chrono::steady_clock::now() + 50ms, state.looks()),
            outcome::timed_out);
  // Member 1 arrives at 1: member 0 is there already, so it passes at once.
  EXPECT_EQ(group[1]->meet(1, std::chrono::steady_clock::now() + 10s, state.looks()), outcome::met);
  auto second = std::async(std::launch::async, [&] {
    return group[0]->meet(2, std::chrono::steady_clock::now() + 10s, state.looks());
  });
  EXPECT_EQ(group[1]->meet(2, std::chrono::steady_clock::now() + 10s, state.looks()), outcome::met);
  EXPECT_EQ(second.get(), outcome::met);
  group.front()->unlink();
}

TEST(host_barrier, a_member_gone_before_it_arrived_fails_the_barrier_for_everyone_naming_it) {
  const auto world = fresh_world();
  auto group = open_group(world, 3);
  membership state;
  auto first = std::async(std::launch::async, [&] {
    return group[0]->meet(1, std::chrono::steady_clock::now() + 30s, state.looks());
  });
  std::this_thread::sleep_for(50ms);
  state.gone = 2;
  group[1]->fail(2); // as a lost callback does: the waiter above wakes without looking
  EXPECT_EQ(first.get(), outcome::failed);
  EXPECT_EQ(group[0]->failed_by(1), 2);
  // Member 1 comes later: the barrier has failed for it too, and so do the next ones.
  EXPECT_EQ(group[1]->meet(1, std::chrono::steady_clock::now() + 30s, state.looks()),
            outcome::failed);
  EXPECT_EQ(group[1]->failed_by(5), 2);
  group.front()->unlink();
}

TEST(host_barrier, a_waiter_finds_a_member_gone_by_looking_when_nobody_tells_it) {
  const auto world = fresh_world();
  auto group = open_group(world, 2);
  membership state;
  state.gone = 1; // left: no lost callback runs
  EXPECT_EQ(group[0]->meet(1, std::chrono::steady_clock::now() + 30s, state.looks()),
            outcome::failed);
  EXPECT_EQ(group[0]->failed_by(1), 1);
  group.front()->unlink();
}

TEST(host_barrier, a_member_that_arrived_and_then_went_does_not_fail_that_barrier) {
  const auto world = fresh_world();
  auto group = open_group(world, 3);
  membership state;
  EXPECT_EQ(group[2]->meet(1, std::chrono::steady_clock::now() + 20ms, state.looks()),
            outcome::timed_out); // arrived at 1
  state.gone = 2;
  group[0]->fail(2);
  auto first = std::async(std::launch::async, [&] {
    return group[0]->meet(1, std::chrono::steady_clock::now() + 30s, state.looks());
  });
  EXPECT_EQ(group[1]->meet(1, std::chrono::steady_clock::now() + 30s, state.looks()), outcome::met);
  EXPECT_EQ(first.get(), outcome::met);
  EXPECT_FALSE(group[0]->failed_by(1));
  EXPECT_EQ(group[0]->meet(2, std::chrono::steady_clock::now() + 30s, state.looks()),
            outcome::failed); // 2 never arrives there
  group.front()->unlink();
}

TEST(host_barrier, a_waiter_whose_world_stops_returns) {
  const auto world = fresh_world();
  auto group = open_group(world, 2);
  membership state;
  auto waiting = std::async(std::launch::async, [&] {
    return group[0]->meet(1, std::nullopt, state.looks()); // no deadline: only the stop ends it
  });
  std::this_thread::sleep_for(50ms);
  state.stopped = true;
  ASSERT_EQ(waiting.wait_for(30s), std::future_status::ready);
  EXPECT_EQ(waiting.get(), outcome::stopped);
  group.front()->unlink();
}

TEST(host_barrier, a_member_ahead_by_the_whole_window_waits_for_the_slowest) {
  const auto world = fresh_world();
  auto group = open_group(world, 2);
  membership state;
  const auto soon = [] { return std::chrono::steady_clock::now() + 1ms; };
  for (std::uint64_t n = 1; n <= host_barrier::slots; ++n)
    ASSERT_EQ(group[0]->meet(n, soon(), state.looks()), outcome::timed_out);
  // Barrier slots + 1 shares a slot with barrier 1, not met yet: member 0 waits, not arrives.
  EXPECT_EQ(group[0]->meet(host_barrier::slots + 1, soon(), state.looks()), outcome::timed_out);
  for (std::uint64_t n = 1; n <= host_barrier::slots; ++n)
    ASSERT_EQ(group[1]->meet(n, soon(), state.looks()), outcome::met);
  auto ahead = std::async(std::launch::async, [&] {
    return group[0]->meet(host_barrier::slots + 1, std::chrono::steady_clock::now() + 30s,
                          state.looks());
  });
  EXPECT_EQ(
    group[1]->meet(host_barrier::slots + 1, std::chrono::steady_clock::now() + 30s, state.looks()),
    outcome::met);
  EXPECT_EQ(ahead.get(), outcome::met);
  group.front()->unlink();
}

TEST(host_barrier, members_that_name_other_members_have_objects_of_their_own) {
  const auto world = fresh_world();
  auto three = open_group(world, 3, "same");
  auto two = open_group(world, 2, "same"); // refused by the group's creation, not here
  EXPECT_NE(three.front()->name(), two.front()->name());
  two.front()->unlink(); // as the refused member does: the others' object stays
  EXPECT_EQ(objects_of(world).size(), 1u);
  three.front()->unlink();
  EXPECT_THROW((void)host_barrier::open(world, "other", {1, 2}, 0), invalid_argument);
  EXPECT_TRUE(objects_of(world).empty());
}

TEST(host_barrier, an_object_of_another_size_under_its_name_is_refused_not_mapped) {
  const auto world = fresh_world();
  auto group = open_group(world, 3);
  const int fd = ::shm_open(group.front()->name().c_str(), O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 64), 0); // a stranger's object, or one cut short
  ::close(fd);
  try {
    (void)host_barrier::open(world, "g", {0, 1, 2}, 1);
    FAIL() << "mapped an object of another size";
  } catch (const state_error& e) {
    EXPECT_NE(std::string{e.what()}.find("was made for no group, not 3"), std::string::npos)
      << e.what();
  }
  group.front()->unlink();
  EXPECT_TRUE(objects_of(world).empty());
}

/// Opens group "g" of ranks 0 and 1 in the world TROUPE_TEST_WORLD names, as rank 0, and dies
/// with it open: a member killed while its group was being made.
TROUPE_ROLE(opens_a_barrier_object_and_dies) {
  (void)host_barrier::open(std::getenv("TROUPE_TEST_WORLD"), "g", {0, 1}, 0);
  ::_exit(0);
}

TEST(host_barrier, an_object_whose_members_all_died_is_collected_and_a_live_ones_is_not) {
  const auto world = fresh_world();
  auto mine = host_barrier::open(world, "mine", {0, 1}, 0); // this process, alive
  testing::member_process dead{"opens_a_barrier_object_and_dies", {{"TROUPE_TEST_WORLD", world}}};
  ASSERT_EQ(dead.exit_code(30s), 0);
  ASSERT_EQ(objects_of(world).size(), 2u);
  std::this_thread::sleep_for(1100ms); // a process sweeps at most once a second
  auto another = host_barrier::open(world, "another", {0, 1}, 0);
  const auto left = objects_of(world);
  EXPECT_EQ(left.size(), 2u) << "the dead member's object went, this process's two stayed";
  EXPECT_TRUE(left.contains(mine->name().substr(1)));
  EXPECT_TRUE(left.contains(another->name().substr(1)));
  mine->unlink();
  another->unlink();
}

} // namespace
} // namespace troupe::detail
