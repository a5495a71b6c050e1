// Actors in worker processes (process_pool::spawn): typed calls that travel, order per sender,
// exceptions as themselves, stop, the bounded mailbox, and what happens when the actor's
// process is killed, with restarts off and on.
#include "process_test_support.hpp"

#include "../actor_checks.hpp"
#include "../tally_actor.hpp"

#include "troupe/actors/actor.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/pools/process_pool.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

struct refuses {
  explicit refuses(std::string why) { throw std::invalid_argument(why); }
  int get() const { return 0; }
};
TROUPE_ACTOR(refuses, std::string, &refuses::get);

/// Made from several arguments.
struct labelled {
  labelled(std::string label, int n) : text(label + "=" + std::to_string(n)) {}
  std::string get() const { return text; }
  std::string text;
};
using labelled_args = troupe::constructor<std::string, int>;
TROUPE_ACTOR(labelled, labelled_args, &labelled::get);

} // namespace

namespace troupe::testing {
namespace {

class process_actor_test : public process_pool_test {
protected:
  process_pool procs{rt, {.workers = 1}};
};

/// Waits (bounded) until process `pid` is gone.
bool gone(int pid) {
  for (int i = 0; i < 5000; ++i) {
    if (::kill(pid, 0) != 0)
      return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

TEST_F(process_actor_test, CallsRunInTheActorsOwnProcessAndKeepItsState) {
  auto a = procs.spawn<tally>(10);
  EXPECT_EQ(a.call(&tally::add, 5).get(10s), 15);
  EXPECT_EQ(a.call(&tally::add, 1).get(10s), 16);
  EXPECT_EQ(a.call(&tally::get).get(10s), 16);
  EXPECT_EQ(a.call(&tally::describe, "n=").get(10s), "n=16"); // a const char* made a string
  const int pid = a.call(&tally::pid).get(10s);
  EXPECT_NE(pid, getpid());
  for (int worker : procs.worker_pids())
    EXPECT_NE(pid, worker) << "the actor has a process of its own, not a task worker's";
  a.tell(&tally::add, 4);
  EXPECT_EQ(a.call(&tally::get).get(10s), 20) << "a tell runs before the call sent after it";
  EXPECT_TRUE(a.alive());
}

TEST_F(process_actor_test, EachSendersCallsRunInTheOrderItSentThem) {
  expect_each_senders_order(procs.spawn<tally>(0), &tally::note, &tally::notes, 8, 50);
}

TEST_F(process_actor_test, AnExceptionComesBackAsItselfNamingTheActor) {
  auto a = procs.spawn<tally>({.name = "tally-7"}, 1);
  try {
    a.call(&tally::fail, "no such key").get(10s);
    FAIL() << "expected std::out_of_range";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string{e.what()}.find("no such key"), std::string::npos);
    const auto* origin = troupe::origin_of(e);
    ASSERT_NE(origin, nullptr);
    EXPECT_NE(origin->worker().find("tally-7"), std::string::npos) << origin->worker();
  }
  EXPECT_EQ(a.call(&tally::get).get(10s), 1) << "the actor goes on after a call threw";
}

TEST_F(process_actor_test, AMethodTheRegistrationDoesNotListIsRefusedInTheCallersHands) {
  auto a = procs.spawn<tally>(1);
  EXPECT_THROW(a.call(&tally::unlisted), troupe::invalid_argument);
  EXPECT_EQ(a.call(&tally::get).get(10s), 1);
}

TEST_F(process_actor_test, AConstructorOfSeveralParametersGetsThemAll) {
  EXPECT_EQ(procs.spawn<labelled>(std::string{"n"}, 3).call(&labelled::get).get(10s), "n=3");
}

TEST_F(process_actor_test, AConstructorThatThrowsFailsEveryCallWithItsException) {
  auto a = procs.spawn<refuses>(std::string{"bad start"});
  try {
    a.call(&refuses::get).get(10s);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("bad start"), std::string::npos);
  }
}

TEST_F(process_actor_test, StopFinishesTheRunningCallAndFailsTheRest) {
  auto a = procs.spawn<tally>(3);
  const int pid = a.call(&tally::pid).get(10s);
  expect_stop_finishes_the_running_call(a, &tally::slow, &tally::get, 3);
  EXPECT_TRUE(gone(pid)) << "the actor's process ends with it";
}

TEST_F(process_actor_test, AFullMailboxMakesAFastSenderWaitThenFail) {
  auto a = procs.spawn<tally>({.max_mailbox = 2, .mailbox_timeout = 100ms}, 0);
  auto running = a.call(&tally::slow, 1000);
  std::this_thread::sleep_for(50ms);
  a.tell(&tally::add, 1);
  a.tell(&tally::add, 1);
  const auto before = std::chrono::steady_clock::now();
  EXPECT_THROW(a.tell(&tally::add, 1), troupe::capacity_error);
  EXPECT_GE(std::chrono::steady_clock::now() - before, 100ms) << "it waited for room first";
  EXPECT_EQ(running.get(10s), 0);
  EXPECT_EQ(a.call(&tally::get).get(10s), 2) << "the two that found room ran";
}

TEST_F(process_actor_test, WithoutRestartsAKilledProcessEndsTheActorAndNothingHangs) {
  auto a = procs.spawn<tally>({.name = "once"}, 5);
  const int pid = a.call(&tally::pid).get(10s);
  expect_loss_without_restart_ends_it(a, &tally::slow, &tally::get, [&] { ::kill(pid, SIGKILL); },
                                      {"'once'", "signal 9", "allows no restart"});
}

TEST_F(process_actor_test, WithRestartsLaterCallsReachANewActorMadeFromTheSameArguments) {
  std::atomic<int> restarts{0};
  std::string cause;
  auto a = procs.spawn<tally>({.name = "kept",
                               .restart = {.max_restarts = 3},
                               .on_restart =
                                 [&](const troupe::actor_restart& r) {
                                   cause = r.cause;
                                   restarts = static_cast<int>(r.restarts);
                                 }},
                              100);
  EXPECT_EQ(a.call(&tally::add, 7).get(10s), 107);
  const int pid = a.call(&tally::pid).get(10s);
  auto running = a.call(&tally::slow, 5000);
  auto queued = a.call(&tally::add, 1); // behind the running call: never reached the old process
  std::this_thread::sleep_for(50ms);
  ::kill(pid, SIGKILL);
  returns_within(10s, "calls across a restart", [&] {
    EXPECT_THROW(running.get(), troupe::worker_lost) << "the call that was running is lost";
    EXPECT_EQ(queued.get(), 101) << "the call behind it reached the new actor, made from 100";
  });
  EXPECT_EQ(restarts.load(), 1);
  EXPECT_NE(cause.find("signal 9"), std::string::npos) << cause;
  const int new_pid = a.call(&tally::pid).get(10s);
  EXPECT_NE(new_pid, pid);
  EXPECT_TRUE(a.alive());
  EXPECT_TRUE(gone(pid));
}

TEST_F(process_actor_test, AnIdempotentCallIsSentAgainToTheReplacement) {
  auto a = procs.spawn<tally>({.restart = {.max_restarts = 2, .max_call_retries = 1}}, 9);
  const int pid = a.call(&tally::pid).get(10s);
  auto retried = a.call(troupe::idempotent, &tally::slow, 1000);
  std::this_thread::sleep_for(50ms);
  ::kill(pid, SIGKILL);
  returns_within(10s, "a retried call", [&] { EXPECT_EQ(retried.get(), 9); });
}

TEST_F(process_actor_test, PastItsRestartLimitTheActorIsGoneNamingTheCause) {
  auto a = procs.spawn<tally>({.restart = {.max_restarts = 1, .within = 60s}}, 0);
  ::kill(a.call(&tally::pid).get(10s), SIGKILL);
  int second = -1;
  returns_within(10s, "a call after one restart", [&] {
    for (;;) { // the first call after the kill may still meet the dying process
      try {
        second = a.call(&tally::pid).get();
        break;
      } catch (const troupe::worker_lost&) {
      }
    }
  });
  ::kill(second, SIGKILL);
  expect_ends_saying(a, &tally::get, "past its restart_policy of 1 restarts");
}

TEST_F(process_actor_test, AFrozenProcessIsTakenForDeadAndReplaced) {
  process_pool watched{rt, {.workers = 1, .heartbeat_timeout = 200ms}};
  auto a = watched.spawn<tally>({.restart = {.max_restarts = 1}}, 4);
  const int pid = a.call(&tally::pid).get(10s);
  ::kill(pid, SIGSTOP);
  returns_within(10s, "a call after a freeze", [&] {
    int now = pid;
    while (now == pid) {
      try {
        now = a.call(&tally::pid).get();
      } catch (const troupe::worker_lost&) {
      }
    }
  });
  EXPECT_TRUE(gone(pid)) << "the frozen process was killed";
}

TEST_F(process_actor_test, TheLastHandleGoneTheMailboxStillRunsThenTheProcessEnds) {
  const auto path = temp_path("actor-drain");
  int pid = 0;
  {
    auto a = procs.spawn<tally>(0);
    pid = a.call(&tally::pid).get(10s);
    for (int i = 0; i < 20; ++i)
      a.tell(&tally::append, path, i);
  }
  EXPECT_TRUE(gone(pid)) << "the process ends once its mailbox is done";
  std::ifstream in{path};
  std::vector<int> lines;
  for (int v = 0; in >> v;)
    lines.push_back(v);
  std::remove(path.c_str());
  EXPECT_EQ(lines, iota(20)) << "every tell sent before the handle went ran, in order";
}

TEST_F(process_actor_test, ACallTooLargeForItsQueueFailsAndTheActorGoesOn) {
  process_pool small{rt, {.workers = 1, .max_message_bytes = 64 << 10}};
  auto a = small.spawn<tally>(2);
  EXPECT_THROW(a.call(&tally::describe, std::string(100 << 10, 'x')).get(10s),
               troupe::capacity_error);
  EXPECT_EQ(a.call(&tally::add, 1).get(10s), 3) << "the calls after it run";
}

TEST(process_actor_runtime, TheRuntimesStopFailsWhatWaitsAndEndsTheProcess) {
  std::optional<troupe::async_result<int>> running, waiting;
  int pid = 0;
  {
    troupe::runtime rt;
    troupe::process_pool procs{rt, {.workers = 1}};
    auto a = procs.spawn<tally>(0);
    pid = a.call(&tally::pid).get(10s);
    running.emplace(a.call(&tally::slow, 20'000));
    waiting.emplace(a.call(&tally::get));
    std::this_thread::sleep_for(50ms);
  }
  returns_within(10s, "calls after the runtime stopped",
                 [&] { EXPECT_THROW(running->get(), troupe::actor_stopped); });
  EXPECT_THROW(waiting->get(1s), troupe::actor_stopped);
  EXPECT_TRUE(gone(pid));
  EXPECT_EQ(shm_objects_of({pid}), 0) << "the actor's queues went with it";
}

} // namespace
} // namespace troupe::testing
