// Process pools: the pool API over worker processes, and what happens when those processes
// die, freeze, abort, or are handed tasks they do not know.
#include "process_test_support.hpp"

#include "troupe/actors/tensor_serialization.hpp"
#include "troupe/pools/process_pool.hpp"
#include "troupe/pools/this_worker.hpp"

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>

#include "troupe/actors/runtime.hpp"
#include "troupe/queues/shm_segment.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <span>
#include <spawn.h>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

using namespace std::chrono_literals;

TROUPE_TASK(square, [](int x) { return x * x; });
TROUPE_TASK(add, [](int a, int b) { return a + b; });
TROUPE_TASK(forty_two, [] { return 42; });
TROUPE_TASK(worker_pid, [](int) { return static_cast<int>(getpid()); });
TROUPE_TASK(worker_slot, [](int) { return static_cast<int>(troupe::this_worker()->index); });
TROUPE_TASK(waits_for_release, [](std::string path) {
  for (int i = 0; i < 20000 && !std::ifstream{path}; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  return 1;
});
TROUPE_TASK(turn_in_worker, [](int) {
  static int turns = 0; // per worker process
  return turns++;
});
TROUPE_TASK(fails_on_13, [](int x) {
  if (x == 13)
    throw std::domain_error("unlucky " + std::to_string(x));
  return x;
});
TROUPE_TASK(crashes, [](int) -> int { std::abort(); });
/// Dies the first time (the marker file does not exist yet), succeeds when run again.
TROUPE_TASK(dies_once, [](std::string marker) {
  if (!std::ifstream{marker}) {
    std::ofstream{marker} << "tried";
    std::abort();
  }
  return 42;
});

namespace {

int initialised = 0;

} // namespace

TROUPE_TASK(initialise, []() { initialised = 7; });
TROUPE_TASK(scaled, [](xt::xarray<float> x, float by) {
  xt::xarray<float> y = x * by;
  return y;
});
/// The task's own use of serialize: its bytes must stand on their own wherever they go.
TROUPE_TASK(encoded_in_worker, [](xt::xarray<float> x) { return troupe::serialize(x); });

/// A context that cannot travel (no serialize member): it must be made in the worker.
struct device {
  std::size_t index;
  int owner_pid;
  int calls = 0;
};

TROUPE_CONTEXT_FACTORY(open_device, [](std::size_t index) {
  return device{index, static_cast<int>(getpid())};
});
TROUPE_TASK(use_device, [](device& d, int x) {
  ++d.calls; // state that lives with the worker
  return std::tuple<int, int, int>{static_cast<int>(d.index), d.owner_pid == getpid(), x};
});
TROUPE_TASK(device_calls, [](device& d, int) { return ++d.calls; });
TROUPE_TASK(worker_pid_with_context, [](device&, int) { return static_cast<int>(getpid()); });
TROUPE_TASK(tag_with_context, [](int& ctx, int x) { return std::pair<int, int>{ctx, x}; });
TROUPE_TASK(add_with_context, [](int& ctx, int a, int b) { return ctx + a + b; });
TROUPE_TASK(read_initialised, [](int) { return initialised; });
TROUPE_TASK(initialiser_fails, []() { throw std::runtime_error("no device"); });
TROUPE_TASK(initialiser_throws_no_exception_class, []() { throw 42; });

namespace {

using troupe::testing::iota;
using troupe::testing::process_pool_test;
using troupe::testing::read_pid;
using troupe::testing::returns_within;
using troupe::testing::start_busy_task;
using troupe::testing::temp_path;

TEST_F(process_pool_test, maps_and_applies_in_worker_processes) {
  troupe::process_pool pool{rt, {.workers = 2}};
  EXPECT_EQ(pool.size(), 2u);
  const auto ys = pool.map(square, iota(1000));
  ASSERT_EQ(ys.size(), 1000u);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(ys[static_cast<std::size_t>(i)], i * i);
  EXPECT_EQ(pool.map(square, iota(300), 1), pool.map(square, iota(300), 50));
  EXPECT_EQ(pool.apply(add, 2, 3), 5);
  EXPECT_EQ(pool.apply_async(square, 9).get(5s), 81);
  EXPECT_EQ(pool.map_async(square, std::vector<int>{1, 2, 3}).get(5s), (std::vector<int>{1, 4, 9}));
  const std::vector<std::tuple<int, int>> pairs{{1, 2}, {3, 4}};
  EXPECT_EQ(pool.starmap(add, pairs), (std::vector<int>{3, 7}));
  EXPECT_EQ(pool.starmap_async(add, pairs).get(5s), (std::vector<int>{3, 7}));
  const auto pids = pool.map(worker_pid, iota(200), 1);
  const std::set<int> distinct(pids.begin(), pids.end());
  EXPECT_EQ(distinct.count(getpid()), 0u) << "tasks run in other processes";
  EXPECT_LE(distinct.size(), 2u);
}

// The dispatcher hands a lone chunk to the first idle worker and leaves it there: an idle
// worker does not take it over before the first has begun (which woke two slot actors, and
// started two processes, for every lone call). And a worker settling its last results is free
// for the next call at once, before its done message reaches the dispatcher: one caller's calls
// in turn all go to the same warm worker.
TEST_F(process_pool_test, one_callers_calls_in_turn_go_to_one_worker) {
  troupe::process_pool pool{rt, {.workers = 2}};
  for (int i = 0; i < 50; ++i)
    ASSERT_EQ(pool.apply(worker_slot, i), 0) << "call " << i << ": the first slot runs it";
  EXPECT_EQ(pool.worker_pids().size(), 1u) << "the other slot's process never started";
}

// A caller's jobs enter the backlog in the order it submitted them, whether it hands a job in
// itself or, finding the dispatcher busy, sends it: with one worker, they run in that order.
TEST_F(process_pool_test, one_callers_jobs_run_in_the_order_it_submitted_them) {
  troupe::process_pool pool{rt, {.workers = 1}};
  for (int round = 0; round < 5; ++round) {
    std::vector<troupe::async_result<int>> turns;
    for (int i = 0; i < 300; ++i)
      turns.push_back(pool.apply_async(turn_in_worker, i));
    int last = -1;
    for (std::size_t i = 0; i < turns.size(); ++i) {
      const int turn = turns[i].get(30s);
      ASSERT_GT(turn, last) << "job " << i << " of round " << round << " ran out of turn";
      last = turn;
    }
  }
}

// A progress callback runs on whichever thread ends the work that crosses it: the dispatcher's,
// holding its table's lock, when it abandons what a dropped stream had not started. One that
// submits to its own pool there is not left waiting for that lock: its job goes by message.
TEST_F(process_pool_test, a_progress_callback_the_dispatcher_runs_may_submit_to_its_own_pool) {
  troupe::process_pool pool{rt, {.workers = 1}};
  const auto release = temp_path("release");
  std::mutex mutex;
  std::optional<troupe::async_result<int>> submitted;
  const auto report = troupe::progress::callback(
    [&](const troupe::progress_update& u) {
      std::lock_guard guard{mutex};
      if (u.failed > 0 && !submitted)
        submitted.emplace(pool.apply_async(square, 7));
    },
    0ms);
  returns_within(60s, "dropping a stream whose progress callback submits", [&] {
    // Dropped at once: what the worker has not started, the dispatcher abandons.
    (void)pool.imap(waits_for_release, std::vector<std::string>(100, release), {1, report});
  });
  std::ofstream{release} << "go"; // what the worker did start ends
  std::optional<troupe::async_result<int>> job;
  for (int i = 0; i < 1000 && !job; ++i) {
    {
      std::lock_guard guard{mutex};
      if (submitted)
        job.emplace(std::move(*submitted));
    }
    if (!job)
      std::this_thread::sleep_for(10ms);
  }
  std::remove(release.c_str());
  ASSERT_TRUE(job) << "the abandoned items were reported";
  returns_within(60s, "the callback's job", [&] { EXPECT_EQ(job->get(30s), 49); });
}

TEST_F(process_pool_test, a_task_without_parameters_runs_on_a_worker) {
  troupe::process_pool pool{rt, {.workers = 1}};
  EXPECT_EQ(pool.apply(forty_two), 42);
  EXPECT_EQ(pool.apply_async(forty_two).get(10s), 42);
}

TEST_F(process_pool_test, imap_streams_in_order_and_imap_unordered_as_they_come) {
  troupe::process_pool pool{rt, {.workers = 2}};
  std::vector<int> ordered;
  for (int y : pool.imap(square, iota(500)))
    ordered.push_back(y);
  ASSERT_EQ(ordered.size(), 500u);
  for (int i = 0; i < 500; ++i)
    ASSERT_EQ(ordered[static_cast<std::size_t>(i)], i * i);
  std::multiset<int> unordered;
  for (int y : pool.imap_unordered(square, iota(500), 7))
    unordered.insert(y);
  EXPECT_EQ(unordered.size(), 500u);
  EXPECT_EQ(*unordered.rbegin(), 499 * 499);
}

TEST_F(process_pool_test, a_tasks_standard_exception_comes_back_as_itself_naming_its_worker) {
  troupe::process_pool pool{rt, {.workers = 2}};
  try {
    (void)pool.map(fails_on_13, iota(40), 3);
    FAIL() << "expected std::domain_error";
  } catch (const std::domain_error& e) {
    EXPECT_STREQ(e.what(), "unlucky 13");
    const auto* origin = troupe::origin_of(e);
    ASSERT_NE(origin, nullptr) << "a rebuilt exception says where it came from";
    EXPECT_EQ(origin->type_name(), "std::domain_error");
    EXPECT_NE(origin->worker().find("worker"), std::string::npos) << origin->worker();
  }
  auto stream = pool.imap(fails_on_13, iota(16));
  for (int i = 0; i < 13; ++i)
    EXPECT_EQ(stream.next(), i);
  EXPECT_THROW((void)stream.next(), std::domain_error);
  EXPECT_EQ(stream.next(), 14) << "the stream goes on after a failed item";
  EXPECT_EQ(pool.apply(square, 4), 16) << "the pool stays usable";
}

TEST_F(process_pool_test, an_unknown_task_name_or_mismatched_signature_gives_serialization_error) {
  troupe::process_pool pool{rt, {.workers = 1}};
  // Not registered anywhere: as if the worker ran another version of the program.
  const auto unknown = troupe::task<int (*)(int)>{"no_such_task", [](int x) { return x; }};
  try {
    (void)pool.apply(unknown, 1);
    FAIL() << "expected serialization_error";
  } catch (const troupe::serialization_error& e) {
    EXPECT_NE(std::string{e.what()}.find("no_such_task"), std::string::npos) << e.what();
  }
  // Registered, but with another signature than the caller's: the bytes do not decode.
  const auto skewed = troupe::task<int (*)(std::string)>{"square", [](std::string) { return 0; }};
  EXPECT_THROW((void)pool.apply(skewed, std::string{"x"}), troupe::serialization_error);
  EXPECT_EQ(pool.apply(square, 5), 25) << "the worker survives both";
}

TEST_F(process_pool_test, a_busy_worker_killed_fails_its_work_with_worker_lost_and_is_replaced) {
  troupe::process_pool pool{rt, {.workers = 2}};
  auto [doomed, pid] = start_busy_task(pool, "busy");
  ASSERT_GT(pid, 0);
  kill(pid, SIGKILL);
  EXPECT_THROW((void)doomed.get(10s), troupe::worker_lost);
  EXPECT_EQ(pool.map(square, iota(100)).size(), 100u) << "the pool keeps serving";
}

TEST_F(process_pool_test, a_frozen_worker_is_detected_by_its_heartbeat) {
  troupe::process_pool pool{rt, {.workers = 1, .heartbeat_timeout = 300ms}};
  auto [doomed, pid] = start_busy_task(pool, "frozen");
  ASSERT_GT(pid, 0);
  kill(pid, SIGSTOP);
  EXPECT_THROW((void)doomed.get(10s), troupe::worker_lost);
  EXPECT_NE(kill(pid, 0) == 0 && waitpid(pid, nullptr, WNOHANG) == 0, true)
    << "the frozen process was killed";
  EXPECT_EQ(pool.apply(square, 3), 9);
}

TEST_F(process_pool_test, a_task_that_aborts_fails_with_worker_lost) {
  troupe::process_pool pool{rt, {.workers = 2}};
  EXPECT_THROW((void)pool.apply(crashes, 1), troupe::worker_lost);
  EXPECT_THROW((void)pool.map(crashes, iota(4), 1), troupe::worker_lost);
  EXPECT_EQ(pool.apply(square, 6), 36);
}

TEST_F(process_pool_test, terminate_stops_running_tasks_instead_of_waiting_for_them) {
  auto pool =
    std::make_unique<troupe::process_pool>(rt, troupe::process_pool_options{.workers = 1});
  auto [running, pid] = start_busy_task(*pool, "terminate"); // would sleep 30 s
  ASSERT_GT(pid, 0);
  const auto start = std::chrono::steady_clock::now();
  pool->terminate();
  pool->join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "terminate waited for the task";
  EXPECT_THROW((void)running.get(1s), troupe::pool_closed);
  pool.reset();
}

TEST_F(process_pool_test, max_retries_reruns_the_work_of_a_dead_worker) {
  troupe::process_pool pool{rt, {.workers = 1, .max_retries = 1}};
  EXPECT_EQ(pool.apply(dies_once, temp_path("retry")), 42);
}

TEST_F(process_pool_test, killed_idle_workers_are_replaced_and_close_join_does_not_hang) {
  troupe::process_pool pool{rt, {.workers = 2}};
  const auto pids = pool.map(worker_pid, iota(100), 1);
  for (int pid : std::set<int>(pids.begin(), pids.end()))
    kill(pid, SIGKILL);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(pool.map(square, iota(50), 1).size(), 50u);
  for (int pid : std::set<int>(pids.begin(), pids.end()))
    kill(pid, SIGKILL);
  pool.close();
  pool.join();
}

TEST_F(process_pool_test, twenty_kill_rounds_never_hang) {
  troupe::process_pool pool{rt, {.workers = 2, .heartbeat_timeout = 500ms}};
  for (int round = 0; round < 20; ++round) {
    const auto path = temp_path("round" + std::to_string(round));
    auto doomed = pool.apply_async(busy_until_killed, path);
    auto fine = pool.map_async(square, iota(20), 1);
    const int pid = read_pid(path);
    ASSERT_GT(pid, 0) << "round " << round;
    kill(pid, round % 3 == 0 ? SIGSTOP : SIGKILL);
    EXPECT_THROW((void)doomed.get(10s), troupe::worker_lost) << "round " << round;
    EXPECT_EQ(fine.get(10s).size(), 20u) << "round " << round;
  }
}

TEST_F(process_pool_test, the_initializer_task_runs_in_each_worker_and_its_failure_is_reported) {
  {
    troupe::process_pool pool{rt, {.workers = 2, .initializer = "initialise"}};
    for (int v : pool.map(read_initialised, iota(20), 1))
      EXPECT_EQ(v, 7);
  }
  troupe::process_pool broken{rt, {.workers = 1, .initializer = "initialiser_fails"}};
  try {
    (void)broken.apply(square, 1);
    FAIL() << "expected the initializer's std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "no device");
    ASSERT_NE(troupe::origin_of(e), nullptr);
    EXPECT_EQ(troupe::origin_of(e)->type_name(), "std::runtime_error");
  }
  // A failure is its type as well as its message: `throw 42` has no message and still fails.
  troupe::process_pool odd{rt,
                           {.workers = 1, .initializer = "initialiser_throws_no_exception_class"}};
  try {
    (void)odd.apply(square, 1);
    FAIL() << "expected the initializer's int, as a task_error";
  } catch (const troupe::task_error& e) {
    EXPECT_EQ(e.type_name(), "int");
  }
}

TEST_F(process_pool_test, max_tasks_per_worker_recycles_the_process) {
  troupe::process_pool pool{rt, {.workers = 1, .max_tasks_per_worker = 2}};
  const auto pids = pool.map(worker_pid, iota(6), 1);
  EXPECT_EQ(std::set<int>(pids.begin(), pids.end()).size(), 3u);
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_EQ(pids[i], pids[i / 2 * 2]) << "item " << i;
}

TEST_F(process_pool_test, large_tensors_travel_through_segments_both_ways) {
  troupe::collect_orphan_segments();
  std::set<int> workers;
  {
    troupe::process_pool pool{rt, {.workers = 2}};
    // 80 MiB each: more than a worker's queue holds (64 MiB), so only segments can carry them.
    const xt::xarray<float> big = xt::ones<float>({20u << 20});
    const auto out = pool.starmap(
      scaled, std::vector<std::tuple<xt::xarray<float>, float>>{{big, 2.f}, {big, 3.f}});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0](0), 2.f);
    EXPECT_EQ(out[1](big.size() - 1), 3.f);
    EXPECT_EQ(out[1].size(), big.size());
    for (int pid : pool.worker_pids())
      workers.insert(pid);
    EXPECT_FALSE(workers.empty());
  }
  EXPECT_EQ(troupe::testing::shm_objects_of(workers), 0)
    << "the pool's queues and segments went with it";
}

TEST_F(process_pool_test, what_a_task_serializes_itself_holds_its_tensors) {
  troupe::process_pool pool{rt, {.workers = 1}};
  const xt::xarray<float> big = xt::ones<float>({1u << 20}) * 5.f; // 4 MiB: a segment's size
  const auto bytes = pool.apply(encoded_in_worker, big);
  EXPECT_EQ(troupe::deserialize<xt::xarray<float>>(bytes), big)
    << "read here, with no worker's segments to fetch from";
}

TEST_F(process_pool_test, context_values_are_sent_to_their_workers) {
  troupe::ctx_process_pool<int> pool{rt, std::vector<int>{10, 20}};
  EXPECT_EQ(pool.size(), 2u);
  const auto tagged = pool.map(tag_with_context, iota(200), 1);
  ASSERT_EQ(tagged.size(), 200u);
  std::set<int> contexts;
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(tagged[static_cast<std::size_t>(i)].second, i);
    contexts.insert(tagged[static_cast<std::size_t>(i)].first);
  }
  for (int c : contexts)
    EXPECT_TRUE(c == 10 || c == 20) << c;
  EXPECT_EQ(pool.starmap(add_with_context, std::vector<std::tuple<int, int>>{{1, 2}}).size(), 1u);
  const int sum = pool.apply(add_with_context, 1, 2);
  EXPECT_TRUE(sum == 13 || sum == 23) << sum;
  EXPECT_THROW((troupe::ctx_process_pool<int>{rt, std::vector<int>{1, 2, 3}, {.workers = 2}}),
               troupe::invalid_argument);
}

TEST_F(process_pool_test, a_context_factory_makes_each_workers_context_in_that_worker) {
  troupe::ctx_process_pool<device> pool{rt, open_device, {.workers = 2}};
  std::set<int> indices;
  for (auto [index, made_here, x] : pool.map(use_device, iota(100), 1)) {
    EXPECT_EQ(made_here, 1) << "the context was made in the process that uses it";
    indices.insert(index);
  }
  for (int i : indices)
    EXPECT_TRUE(i == 0 || i == 1) << i;
  // The context lives with its worker: its call count keeps growing.
  troupe::ctx_process_pool<device> one{rt, open_device, {.workers = 1}};
  const auto counts = one.map(device_calls, iota(5), 1);
  EXPECT_EQ(counts, (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST_F(process_pool_test, a_replaced_worker_gets_its_context_again) {
  troupe::ctx_process_pool<int> pool{rt, std::vector<int>{7}, {.max_tasks_per_worker = 1}};
  for (auto [ctx, x] : pool.map(tag_with_context, iota(4), 1))
    EXPECT_EQ(ctx, 7) << "item " << x << ": each task ran on a fresh worker process";
  // A killed worker is replaced by one made with the same factory and index. (The next task may
  // reach the dying process before its death is seen: max_retries runs it on the replacement.)
  troupe::ctx_process_pool<device> devices{rt, open_device, {.workers = 1, .max_retries = 1}};
  auto before = devices.apply(use_device, 1);
  EXPECT_EQ(std::get<0>(before), 0);
  const auto pids = devices.map(worker_pid_with_context, iota(1));
  kill(pids[0], SIGKILL);
  const auto after = devices.apply(use_device, 2);
  EXPECT_EQ(std::get<0>(after), 0);
  EXPECT_EQ(std::get<1>(after), 1);
}

TEST(process_pool_orphans, workers_die_with_the_pools_process) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP()
    << "needs fork() of a multi-threaded process, which ThreadSanitizer does not support";
#endif
  int fds[2];
  ASSERT_EQ(pipe(fds), 0); // workers inherit no descriptors beyond stderr, so EOF comes
  const pid_t owner = fork();
  if (owner == 0) {
    troupe::runtime rt;
    troupe::process_pool pool{rt, {.workers = 2}};
    const auto pids = pool.map(worker_pid, iota(50), 1);
    for (int pid : std::set<int>(pids.begin(), pids.end()))
      (void)!write(fds[1], &pid, sizeof pid);
    close(fds[1]);
    pause();
    _exit(0);
  }
  close(fds[1]);
  std::set<int> workers;
  int pid;
  while (read(fds[0], &pid, sizeof pid) == sizeof pid)
    workers.insert(pid);
  close(fds[0]);
  ASSERT_FALSE(workers.empty());
  kill(owner, SIGKILL);
  waitpid(owner, nullptr, 0);
  for (int w : workers) {
    bool gone = false;
    for (int i = 0; i < 2000 && !gone; ++i) {
      gone = kill(w, 0) != 0;
      if (!gone)
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_TRUE(gone) << "worker " << w << " outlived its pool's process";
  }
  // What the killed pool left in /dev/shm goes when the next pool starts.
  troupe::runtime rt;
  troupe::process_pool next{rt, {.workers = 1}};
  EXPECT_EQ(next.apply(square, 2), 4);
  troupe::collect_orphan_segments();
  const std::string prefix = "troupe.q.pool-" + std::to_string(owner) + "-";
  for (const auto& entry : std::filesystem::directory_iterator{"/dev/shm"}) {
    EXPECT_NE(entry.path().filename().string().rfind(prefix, 0), 0u)
      << entry.path() << " of the killed pool is still there";
    EXPECT_NE(entry.path().filename().string().find("troupe.seg." + std::to_string(owner) + "."),
              0u)
      << entry.path() << " of the killed pool is still there";
  }
}

} // namespace

#include "../worker_program_main.hpp" // this binary is also the pool's worker program
