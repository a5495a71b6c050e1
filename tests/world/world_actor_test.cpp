// Actors on world members (rpc_group::spawn): typed calls, named lookup, handles that travel to
// other members, order per sender, stop, placement on the least loaded member, and what happens
// when the member an actor runs on is killed, with restarts off and on.
#include "world_test_support.hpp"

#include "../actor_checks.hpp"
#include "../eventually.hpp"
#include "../tally_actor.hpp"

#include "troupe/actors/actor.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using troupe::testing::tally;

/// Runs on another member: calls the actor through the handle it was given.
TROUPE_TASK(add_through,
            [](troupe::actor<tally> a, int k) { return a.call(&tally::add, k).get(); });

/// An actor of another type, for lookups that name the wrong one.
struct echo {
  explicit echo(std::string said) : said(std::move(said)) {}
  std::string say() const { return said; }
  std::string said;
};
TROUPE_ACTOR(echo, std::string, &echo::say);

} // namespace

namespace troupe::testing {
namespace {

/// Ranks 0 and 2: form the world and the group, then serve until the test's member leaves.
TROUPE_ROLE(actor_member) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("actors", everyone);
    wait_until_gone(group, "1");
  });
}

/// Run twice: calls through the shared-memory inboxes of members on one host, and over TCP (this
/// member opens no inbox), whose answers travel another way.
class world_actors : public ::testing::TestWithParam<bool> {
protected:
  int port = free_port();
  troupe::runtime rt;
  member_process rank0{"actor_member", member_environment(0, 3, port)};
  member_process host{"actor_member", member_environment(2, 3, port)};
  std::optional<troupe::world> world;
  std::optional<troupe::rpc_group> group;

  void SetUp() override {
    auto options = member_options(1, 3, port);
    options.shared_memory = GetParam();
    world.emplace(rt, options);
    group.emplace(world->create_rpc_group("actors", everyone));
  }
  void TearDown() override {
    group.reset();
    world.reset();
    // Each member leaves once this one has, and takes its inboxes with it.
    EXPECT_EQ(rank0.exit_code(30s), 0);
    if (!host_killed) {
      EXPECT_EQ(host.exit_code(30s), 0);
    }
  }
  void kill_host() {
    host.kill_and_collect();
    host_killed = true;
  }
  bool host_killed = false;
};

TEST_P(world_actors, CallsReachTheActorOnItsMemberAndKeepItsState) {
  auto a = group->spawn<tally>("2", {.name = "t"}, 10);
  EXPECT_EQ(a.call(&tally::add, 5).get(10s), 15);
  EXPECT_EQ(a.call(&tally::get).get(10s), 15);
  EXPECT_EQ(a.call(&tally::pid).get(10s), host.pid()) << "it runs on member 2";
  a.tell(&tally::add, 1);
  EXPECT_EQ(a.call(&tally::get).get(10s), 16);
  try {
    a.call(&tally::fail, "bad key").get(10s);
    FAIL() << "expected std::out_of_range";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string{e.what()}.find("bad key"), std::string::npos);
    ASSERT_NE(troupe::origin_of(e), nullptr);
    EXPECT_NE(troupe::origin_of(e)->worker().find("actor 't' on member '2'"), std::string::npos)
      << troupe::origin_of(e)->worker();
  }
}

TEST_P(world_actors, AnyMemberFindsItByNameAndHandlesTravelToOtherMembers) {
  auto a = group->spawn<tally>("2", {.name = "shared"}, 0);
  auto found = group->actor<tally>("shared");
  EXPECT_EQ(found.call(&tally::add, 2).get(10s), 2);
  // Member 0 is handed the handle as a task's argument and calls the same actor through it.
  EXPECT_EQ(group->rpc_sync("0", add_through, a, 3), 5);
  EXPECT_EQ(a.call(&tally::get).get(10s), 5);
  EXPECT_THROW(group->actor<tally>("nobody"), troupe::key_error);
}

TEST_P(world_actors, AHandleToAnActorOutsideTheWorldCannotReachAMemberAndSaysWhy) {
  auto local = troupe::spawn<tally>(rt, {.name = "homebound"}, 0);
  try {
    group->rpc_sync("0", add_through, local, 3);
    FAIL() << "expected serialization_error";
  } catch (const troupe::serialization_error& e) {
    EXPECT_NE(std::string{e.what()}.find("'homebound'"), std::string::npos) << e.what();
    EXPECT_NE(std::string{e.what()}.find("cannot reach it"), std::string::npos) << e.what();
  }
  EXPECT_EQ(local.call(&tally::get).get(10s), 0);
}

TEST_P(world_actors, EachSendersCallsRunInTheOrderItSentThem) {
  expect_each_senders_order(group->spawn<tally>("0", {.name = "ordered"}, 0), &tally::note,
                            &tally::notes, 8, 40);
}

TEST_P(world_actors, ANameIsTakenOnceAndAConstructorsExceptionComesOutOfSpawn) {
  auto a = group->spawn<tally>("2", {.name = "once"}, 1);
  EXPECT_THROW(group->spawn<tally>("0", {.name = "once"}, 1), troupe::key_error);
  EXPECT_THROW(group->spawn<tally>("2", {.name = "bad"}, -1), std::domain_error);
  EXPECT_THROW(group->spawn<tally>("2", {}, 1), troupe::invalid_argument) << "no name";
  EXPECT_EQ(a.call(&tally::get).get(10s), 1);
}

TEST_P(world_actors, AMemberRunsAtMost1024ActorsForTheOthers) {
  std::vector<troupe::actor<tally>> many;
  for (int i = 0; i < 1024; ++i)
    many.push_back(group->spawn<tally>("2", {.name = "many-" + std::to_string(i)}, i));
  try {
    (void)group->spawn<tally>("2", {.name = "one-too-many"}, 0);
    FAIL() << "expected capacity_error";
  } catch (const troupe::capacity_error& e) {
    EXPECT_NE(std::string{e.what()}.find("1024 actors"), std::string::npos) << e.what();
  }
  EXPECT_EQ(many.back().call(&tally::get).get(10s), 1023);
  many.front().stop();
  ASSERT_TRUE(eventually([&] {
    try {
      (void)group->spawn<tally>("2", {.name = "one-too-many"}, 0);
      return true;
    } catch (const troupe::capacity_error&) {
      return false;
    }
  }))
    << "a stopped actor makes room";
}

TEST_P(world_actors, StopFinishesTheRunningCallFailsTheRestAndFreesTheName) {
  auto a = group->spawn<tally>("2", {.name = "stopping"}, 3);
  expect_stop_finishes_the_running_call(a, &tally::slow, &tally::get, 3);
  ASSERT_TRUE(eventually([&] {
    try {
      (void)group->actor<tally>("stopping");
      return false;
    } catch (const troupe::key_error&) {
      return true;
    }
  }));
  auto again = group->spawn<tally>("0", {.name = "stopping"}, 7);
  EXPECT_EQ(again.call(&tally::get).get(10s), 7);
}

TEST_P(world_actors, ALookupThatNamesAnotherTypeIsInvalidArgumentNamingBoth) {
  auto a = group->spawn<tally>("2", {.name = "typed"}, 1);
  try {
    (void)group->actor<echo>("typed");
    FAIL() << "expected invalid_argument";
  } catch (const troupe::invalid_argument& e) {
    const std::string said = e.what();
    EXPECT_NE(said.find("'typed'"), std::string::npos) << said;
    EXPECT_NE(said.find(troupe::detail::actor_type_key<tally>()), std::string::npos) << said;
    EXPECT_NE(said.find(troupe::detail::actor_type_key<echo>()), std::string::npos) << said;
  }
  EXPECT_EQ(group->actor<tally>("typed").call(&tally::get).get(10s), 1);
}

/// A lookup racing with stop() finds the actor (whose calls then run or fail with
/// actor_stopped) or fails with key_error, whichever member answers it: rank 0, whose table may
/// still name the member, or the member, which stopped it a moment ago.
TEST_P(world_actors, ALookupRacingWithStopFindsTheActorOrSaysKeyError) {
  for (int round = 0; round < 12; ++round) {
    const auto name = "racing-" + std::to_string(round);
    auto a = group->spawn<tally>(round % 2 ? "2" : "0", {.name = name}, round);
    auto lookups = std::async(std::launch::async, [&]() -> std::string {
      for (;;) {
        try {
          auto found = group->actor<tally>(name);
          try {
            EXPECT_EQ(found.call(&tally::get).get(10s), round);
          } catch (const troupe::actor_stopped&) {
            // found before the stop: the call came after it
          }
        } catch (const troupe::key_error&) {
          return {};
        } catch (const std::exception& e) {
          return std::string{typeid(e).name()} + ": " + e.what();
        }
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds{round % 4});
    a.stop();
    ASSERT_EQ(lookups.wait_for(30s), std::future_status::ready);
    EXPECT_EQ(lookups.get(), "") << "round " << round;
    expect_ends_saying(a, &tally::get, "stop() was called");
  }
}

TEST_P(world_actors, TheLeastLoadedMemberGetsTheNextActor) {
  auto first = group->spawn<tally>("0", {.name = "a"}, 0);
  auto second = group->spawn<tally>("1", {.name = "b"}, 0);
  auto placed = group->spawn<tally>(troupe::least_loaded, {.name = "c"}, 0);
  EXPECT_EQ(placed.call(&tally::pid).get(10s), host.pid()) << "member 2 ran none";
}

TEST_P(world_actors, AFullMailboxMakesAFastSenderWaitThenFail) {
  auto a =
    group->spawn<tally>("2", {.name = "full", .max_mailbox = 2, .mailbox_timeout = 100ms}, 0);
  auto running = a.call(&tally::slow, 1000);
  a.tell(&tally::add, 1);
  EXPECT_THROW(a.tell(&tally::add, 1), troupe::capacity_error)
    << "the running call and one waiting fill a mailbox of 2 on the sender's side";
  EXPECT_EQ(running.get(10s), 0);
  EXPECT_EQ(a.call(&tally::get).get(10s), 1);
}

TEST_P(world_actors, WithoutRestartsALostMemberEndsTheActorAndNothingHangs) {
  auto a = group->spawn<tally>("2", {.name = "mortal"}, 5);
  auto running = a.call(&tally::slow, 10'000);
  std::this_thread::sleep_for(100ms);
  kill_host();
  EXPECT_THROW(running.get(15s), troupe::worker_lost);
  ASSERT_TRUE(eventually([&] { return !a.alive(); }));
  try {
    a.call(&tally::get).get(10s);
    FAIL() << "expected actor_stopped";
  } catch (const troupe::actor_stopped& e) {
    EXPECT_NE(std::string{e.what()}.find("allows no restart"), std::string::npos) << e.what();
  }
}

TEST_P(world_actors, AHandleFoundByNameLearnsThatALostActorWillNotComeBack) {
  auto spawned = group->spawn<tally>("2", {.name = "unrestarted"}, 1);
  auto found = group->actor<tally>("unrestarted");
  EXPECT_EQ(found.call(&tally::get).get(10s), 1);
  kill_host();
  ASSERT_TRUE(eventually([&] { return !spawned.alive(); }));
  // The world's timeout is 20 s: a handle that waited for a restart would still be waiting.
  auto outcome = std::async(std::launch::async, [&] {
    for (;;) {
      try {
        found.call(&tally::get).get(10s);
      } catch (const troupe::worker_lost&) {
        continue; // its first call after the loss may meet the dead member
      } catch (const troupe::actor_stopped& e) {
        return std::string{e.what()};
      }
    }
  });
  ASSERT_EQ(outcome.wait_for(10s), std::future_status::ready);
  EXPECT_NE(outcome.get().find("was not made again"), std::string::npos);
}

TEST_P(world_actors, WithRestartsItIsMadeAgainOnAnotherMemberFromTheSameArguments) {
  std::atomic<int> restarts{0};
  auto a = group->spawn<tally>(
    "2",
    {.name = "phoenix",
     .restart = {.max_restarts = 1, .max_call_retries = 1},
     .on_restart =
       [&](const troupe::actor_restart& r) { restarts = static_cast<int>(r.restarts); }},
    100);
  EXPECT_EQ(a.call(&tally::add, 5).get(10s), 105);
  auto found = group->actor<tally>("phoenix"); // learns the policy from the actor's member
  auto running = a.call(&tally::slow, 10'000);
  // Two handles' calls have no order between them: the others go once this one runs.
  std::this_thread::sleep_for(100ms);
  auto retried = a.call(troupe::idempotent, &tally::get);
  auto retried_elsewhere = found.call(troupe::idempotent, &tally::get);
  auto not_retried = found.call(&tally::get);
  std::this_thread::sleep_for(100ms);
  kill_host();
  EXPECT_THROW(running.get(15s), troupe::worker_lost);
  EXPECT_EQ(retried.get(15s), 100) << "an idempotent call goes again, to the new actor";
  EXPECT_EQ(retried_elsewhere.get(15s), 100) << "through a handle found by name too";
  EXPECT_THROW(not_retried.get(15s), troupe::worker_lost);
  EXPECT_EQ(restarts.load(), 1);
  EXPECT_EQ(a.call(&tally::pid).get(10s), rank0.pid()) << "made again on member 0";
  EXPECT_EQ(group->actor<tally>("phoenix").call(&tally::get).get(10s), 100)
    << "other handles find it again by name";
}

TEST_P(world_actors, ARestartGoesToTheMemberItsPolicyNames) {
  EXPECT_THROW(group->spawn<tally>("2", {.name = "x", .restart = {.members = {"nobody"}}}, 0),
               troupe::invalid_argument);
  // Left to itself, a restart would go to the member after "2": "0".
  auto a = group->spawn<tally>(
    "2", {.name = "homing", .restart = {.max_restarts = 1, .members = {"2", "1"}}}, 7);
  EXPECT_EQ(a.call(&tally::add, 1).get(10s), 8);
  kill_host();
  ASSERT_TRUE(eventually([&] {
    try {
      return a.call(&tally::pid).get(10s) == getpid();
    } catch (const troupe::worker_lost&) {
      return false; // the call met the lost member
    }
  }))
    << "made again here, on member 1, the lost one passed over";
  EXPECT_EQ(a.call(&tally::get).get(10s), 7);
}

INSTANTIATE_TEST_SUITE_P(inboxes_and_tcp, world_actors, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "inboxes" : "tcp"; });

} // namespace
} // namespace troupe::testing
