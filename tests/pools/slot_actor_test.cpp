// Actors placed in a process pool's slot (process_pool::spawn with troupe::in_slot): they live in
// the slot's worker process beside the pool's tasks, are served there by a thread of their own,
// and follow the slot's process: made again in its replacement when it dies, stopped when the
// pool closes.
#include "process_test_support.hpp"

#include "../actor_checks.hpp"
#include "../tally_actor.hpp"

#include "troupe/actors/actor.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/pools/process_pool.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

namespace {

/// Holds its worker until `path` exists: pool work the test ends when it chooses.
TROUPE_TASK(wait_for_file, [](std::string path) {
  for (int i = 0; i < 10000 && !std::ifstream{path}; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  return getpid();
});

TROUPE_TASK(cube_beside_actors, [](int x) { return x * x * x; });

} // namespace

namespace troupe::testing {
namespace {

class slot_actor_test : public process_pool_test {
protected:
  process_pool procs{rt, {.workers = 2}};

  bool runs_in_pool(int pid) const {
    const auto pids = procs.worker_pids();
    return std::find(pids.begin(), pids.end(), pid) != pids.end();
  }
};

TEST_F(slot_actor_test, ItLivesInTheSlotsWorkerProcessAndKnowsItsSlot) {
  auto a = procs.spawn<tally>(troupe::in_slot{1}, 10);
  EXPECT_EQ(a.call(&tally::add, 5).get(10s), 15);
  const int pid = a.call(&tally::pid).get(10s);
  EXPECT_NE(pid, getpid());
  EXPECT_TRUE(runs_in_pool(pid)) << "slot 1's process started for it, before any task";
  EXPECT_EQ(a.call(&tally::slot).get(10s), 1);
  EXPECT_EQ(a.call(&tally::slot_made_in).get(10s), 1) << "its constructor saw the slot too";
  auto b = procs.spawn<tally>(troupe::in_slot{1}, {.name = "neighbour"}, 0);
  EXPECT_EQ(b.call(&tally::pid).get(10s), pid) << "two actors share the slot's process";
  EXPECT_EQ(b.call(&tally::add, 1).get(10s), 1) << "each with its own state";
  EXPECT_EQ(a.call(&tally::get).get(10s), 15);
}

TEST_F(slot_actor_test, ItsCallsDoNotWaitBehindThePoolsTasks) {
  auto a = procs.spawn<tally>(troupe::in_slot{0}, 3);
  const int pid = a.call(&tally::pid).get(10s);
  const auto release = temp_path("slot-release");
  auto busy = procs.map_async(wait_for_file, std::vector<std::string>(2, release), 1);
  std::this_thread::sleep_for(100ms); // both workers are held
  EXPECT_EQ(a.call(&tally::add, 1).get(10s), 4);
  EXPECT_FALSE(busy.ready()) << "the call was answered while the tasks waited";
  std::ofstream{release} << 1;
  const auto ran_in = busy.get(30s);
  std::remove(release.c_str());
  EXPECT_NE(std::find(ran_in.begin(), ran_in.end(), pid), ran_in.end())
    << "one of the tasks held the actor's own process";
}

TEST_F(slot_actor_test, EachSendersCallsRunInTheOrderItSentThem) {
  expect_each_senders_order(procs.spawn<tally>(troupe::in_slot{0}, 0), &tally::note, &tally::notes,
                            8, 50);
}

TEST_F(slot_actor_test, StopFinishesTheRunningCallAndTheSlotGoesOn) {
  auto a = procs.spawn<tally>(troupe::in_slot{1}, 3);
  const int pid = a.call(&tally::pid).get(10s);
  expect_stop_finishes_the_running_call(a, &tally::slow, &tally::get, 3);
  EXPECT_TRUE(runs_in_pool(pid)) << "the slot's process is the pool's, and stays";
  auto b = procs.spawn<tally>(troupe::in_slot{1}, 8);
  EXPECT_EQ(b.call(&tally::pid).get(10s), pid);
}

TEST_F(slot_actor_test, WithRestartsItIsMadeAgainInTheSlotsNextProcess) {
  int restarts = 0;
  auto a = procs.spawn<tally>(
    troupe::in_slot{1},
    {.restart = {.max_restarts = 2},
     .on_restart =
       [&](const troupe::actor_restart& r) { restarts = static_cast<int>(r.restarts); }},
    100);
  EXPECT_EQ(a.call(&tally::add, 7).get(10s), 107);
  const int pid = a.call(&tally::pid).get(10s);
  auto running = a.call(&tally::slow, 5000);
  auto queued = a.call(&tally::add, 1);
  std::this_thread::sleep_for(50ms);
  ::kill(pid, SIGKILL);
  returns_within(20s, "calls across the slot's replacement", [&] {
    try {
      running.get();
      FAIL() << "expected worker_lost";
    } catch (const troupe::worker_lost& e) {
      EXPECT_NE(std::string{e.what()}.find("signal 9"), std::string::npos) << e.what();
    }
    EXPECT_EQ(queued.get(), 101) << "the call behind it reached the actor made again from 100";
  });
  EXPECT_EQ(restarts, 1);
  const int new_pid = a.call(&tally::pid).get(10s);
  EXPECT_NE(new_pid, pid);
  EXPECT_TRUE(runs_in_pool(new_pid)) << "the slot's replacement hosts it";
  EXPECT_EQ(a.call(&tally::slot).get(10s), 1);
  EXPECT_EQ(procs.map(cube_beside_actors, std::vector<int>{1, 2, 3}), (std::vector<int>{1, 8, 27}))
    << "the pool goes on";
}

TEST_F(slot_actor_test, WithoutRestartsTheSlotsDeathEndsTheActorAndNothingHangs) {
  auto a = procs.spawn<tally>(troupe::in_slot{0}, {.name = "once"}, 5);
  const int pid = a.call(&tally::pid).get(10s);
  expect_loss_without_restart_ends_it(
    a, &tally::slow, &tally::get, [&] { ::kill(pid, SIGKILL); },
    {"'once'", "its worker process (pid " + std::to_string(pid) + ") was killed by signal 9",
     "allows no restart"});
}

TEST_F(slot_actor_test, ClosingThePoolStopsItsActorsSayingSo) {
  // One that may restart and one that may not: closing is no loss, so neither is told its
  // process was lost.
  auto restartable = procs.spawn<tally>(troupe::in_slot{0}, {.restart = {.max_restarts = 5}}, 1);
  auto unrestarted = procs.spawn<tally>(troupe::in_slot{1}, {.name = "once"}, 2);
  EXPECT_EQ(restartable.call(&tally::get).get(10s), 1);
  EXPECT_EQ(unrestarted.call(&tally::get).get(10s), 2);
  procs.close();
  procs.join();
  expect_ends_saying(restartable, &tally::get, "the pool was closed");
  expect_ends_saying(unrestarted, &tally::get, "the pool was closed");
  EXPECT_THROW((void)procs.spawn<tally>(troupe::in_slot{0}, 1), troupe::pool_closed);
}

TEST_F(slot_actor_test, TerminatingThePoolStopsItsActorsSayingSo) {
  auto a = procs.spawn<tally>(troupe::in_slot{1}, {.name = "cut short"}, 3);
  EXPECT_EQ(a.call(&tally::get).get(10s), 3);
  procs.terminate();
  procs.join();
  expect_ends_saying(a, &tally::get, "the pool was terminated");
}

TEST_F(slot_actor_test, ASlotThePoolsProcessesDoNotHaveIsRefused) {
  try {
    (void)procs.spawn<tally>(troupe::in_slot{2}, 1);
    FAIL() << "expected invalid_argument";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("slots 0 to 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)procs.spawn<tally>(troupe::in_slot{0}, {.restart = {.members = {"a"}}}, 1),
               troupe::invalid_argument)
    << "it restarts in its slot, not on a world member";
  process_pool rotating{rt, {.workers = 1, .max_tasks_per_worker = 10}};
  try {
    (void)rotating.spawn<tally>(troupe::in_slot{0}, 1);
    FAIL() << "expected invalid_argument";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("max_tasks_per_worker"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace troupe::testing
