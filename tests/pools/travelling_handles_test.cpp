// Handles to actors outside a world travel to the worker processes of their process's pools (as
// a task's argument or result): calls through them come back to the actor, whether it lives on
// a thread of this process, in a worker process of its own or in a pool's slot; the answer, or
// the exception, goes back to the task. (A process that cannot reach the actor is told so:
// world_actor_test.cpp.)
#include "process_test_support.hpp"

#include "../eventually.hpp"
#include "../tally_actor.hpp"

#include "troupe/actors/actor.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/pools/process_pool.hpp"

#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using troupe::testing::tally;

/// Runs in a worker process: calls the actor through the handle it was given.
TROUPE_TASK(add_through,
            [](troupe::actor<tally> a, int k) { return a.call(&tally::add, k).get(); });
TROUPE_TASK(pid_through, [](troupe::actor<tally> a) { return a.call(&tally::pid).get(); });
TROUPE_TASK(fail_through, [](troupe::actor<tally> a, std::string why) {
  a.call(&tally::fail, why).get();
  return 0;
});
TROUPE_TASK(tell_through, [](troupe::actor<tally> a, int k) {
  a.tell(&tally::add, k);
  return getpid();
});
TROUPE_TASK(hand_back, [](troupe::actor<tally> a) { return a; });
/// Returns at once, leaving a thread of its own to call the actor a moment later.
TROUPE_TASK(add_later, [](troupe::actor<tally> a, int k) {
  std::thread([a, k] {
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
    a.call(&tally::add, k).get();
  }).detach();
  return 0;
});

} // namespace

namespace troupe::testing {
namespace {

class travelling_handles : public process_pool_test {
protected:
  process_pool procs{rt, {.workers = 2}};

  /// 20 tasks, each adding 1 through its copy of `a`; their answers, sorted.
  std::vector<int> add_from_tasks(const troupe::actor<tally>& a) {
    auto answers =
      procs.starmap(add_through, std::vector<std::tuple<troupe::actor<tally>, int>>(20, {a, 1}), 1);
    std::sort(answers.begin(), answers.end());
    return answers;
  }
  static std::vector<int> one_to(int n) {
    std::vector<int> v(static_cast<std::size_t>(n));
    std::iota(v.begin(), v.end(), 1);
    return v;
  }
};

TEST_F(travelling_handles, AnActorOnAThreadHereIsCalledFromPoolTasks) {
  auto a = troupe::spawn<tally>(rt, 0);
  EXPECT_EQ(add_from_tasks(a), one_to(20)) << "one call at a time, each seeing the last";
  EXPECT_EQ(a.call(&tally::get).get(10s), 20);
  EXPECT_EQ(procs.apply(pid_through, a), getpid()) << "the calls ran here";
}

TEST_F(travelling_handles, AnActorInAWorkerProcessOfItsOwnIsCalledFromPoolTasks) {
  auto a = procs.spawn<tally>(0);
  EXPECT_EQ(add_from_tasks(a), one_to(20));
  const int actor_pid = a.call(&tally::pid).get(10s);
  EXPECT_EQ(procs.apply(pid_through, a), actor_pid) << "relayed on to the actor's process";
}

TEST_F(travelling_handles, AnActorInASlotIsCalledFromTheOtherSlotsTasks) {
  auto a = procs.spawn<tally>(troupe::in_slot{1}, 0);
  EXPECT_EQ(add_from_tasks(a), one_to(20));
  EXPECT_EQ(a.call(&tally::get).get(10s), 20);
}

TEST_F(travelling_handles, ACallsExceptionReachesTheTaskAsItself) {
  auto a = troupe::spawn<tally>(rt, 0);
  try {
    procs.apply(fail_through, a, std::string{"no such key"});
    FAIL() << "expected std::out_of_range";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string{e.what()}.find("no such key"), std::string::npos) << e.what();
  }
}

TEST_F(travelling_handles, ATellFromATaskRunsAndAHandleComesBackToTheSameActor) {
  auto a = troupe::spawn<tally>(rt, 5);
  (void)procs.apply(tell_through, a, 2);
  auto back = procs.apply(hand_back, a);
  EXPECT_EQ(back.call(&tally::add, 1).get(10s), 8)
    << "the tell ran before the task's answer came; the handle that came back is this actor's";
}

TEST_F(travelling_handles, AThreadAWorkerStartedReachesTheActorWhileThePoolIdles) {
  auto a = troupe::spawn<tally>(rt, 0);
  (void)procs.apply(add_later, a, 7);
  EXPECT_TRUE(eventually([&] { return a.call(&tally::get).get(10s) == 7; }))
    << "the call came after the task, with no task after it";
}

TEST_F(travelling_handles, AStoppedActorFailsTheTasksCallsAsStopped) {
  auto a = troupe::spawn<tally>(rt, {.name = "gone"}, 0);
  a.stop();
  try {
    procs.apply(add_through, a, 1);
    FAIL() << "expected actor_stopped";
  } catch (const troupe::actor_stopped& e) {
    EXPECT_NE(std::string{e.what()}.find("'gone'"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace troupe::testing
