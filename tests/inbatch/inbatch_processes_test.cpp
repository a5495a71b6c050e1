// inbatch_parallel's processes target (other_seeds.md §3c, 14): a registered method run in
// worker processes on copies of the batch.
#include "troupe/inbatch/inbatch_parallel.hpp"

#include "inbatch_test_support.hpp"
#include "process_test_support.hpp"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <utility>

using troupe::testing::ten_batch;

/// Squares the index, and scribbles on its copy of the batch.
TROUPE_TASK(inbatch_square, [](ten_batch& b, std::size_t ix) {
  b.data[ix] = -1;
  return static_cast<int>(ix * ix);
});

TROUPE_TASK(inbatch_out_of_range_at_3, [](ten_batch&, std::size_t ix) {
  if (ix == 3)
    throw std::out_of_range("bad 3");
  return static_cast<int>(ix);
});

/// Item 3 writes its pid to `path` and waits to be killed.
TROUPE_TASK(inbatch_stall_at_3, [](ten_batch&, std::size_t ix, std::string path) {
  if (ix == 3)
    return busy_until_killed.fn(path);
  return static_cast<int>(ix);
});

TROUPE_TASK(inbatch_scaled,
            [](ten_batch& b, std::size_t ix, int factor, const troupe::named_args& named) {
              return b.data[ix] * factor * named.get<int>("k");
            });

/// What item 0 of the batch held when this item began, after which it scribbles on it.
TROUPE_TASK(inbatch_first_then_scribble, [](ten_batch& b, std::size_t) {
  const int seen = b.data[0];
  b.data[0] = 1000;
  return seen;
});

TROUPE_TASK(inbatch_read_only, [](const ten_batch& b, std::size_t ix) { return b.data[ix] + 1; });

TROUPE_TASK(inbatch_item_plus_row, [](const ten_batch&, int item, const std::vector<float>& row) {
  return item + static_cast<int>(row.at(0));
});

TROUPE_TASK(inbatch_row_times_k,
            [](const ten_batch&, const std::vector<float>& row, const troupe::named_args& named) {
              return static_cast<int>(row.at(0)) * named.get<int>("k");
            });

/// When it ran (steady clock, shared by the processes of a host), as {start, end} in ns.
TROUPE_TASK(inbatch_interval, [](const ten_batch&, std::size_t) {
  const auto now = [] { return std::chrono::steady_clock::now().time_since_epoch().count(); };
  const auto start = now();
  std::this_thread::sleep_for(std::chrono::milliseconds{5});
  return std::pair<long long, long long>{start, now()};
});

TROUPE_TASK(inbatch_pid, [](ten_batch&, std::size_t) { return static_cast<int>(getpid()); });

namespace {

using troupe::testing::process_pool_test;
using namespace std::chrono_literals;
using outcomes_of_int = troupe::outcomes<int>;

const auto keep_outcomes = [](ten_batch&, outcomes_of_int& out) { return out; };

/// An action running `method` over the indices in `procs`, handing back the outcomes.
template <class Task>
auto on_processes(troupe::runtime& rt, const Task& method, troupe::process_pool& procs,
                  troupe::inbatch_options options = {}) {
  options.target = troupe::inbatch_target::processes;
  options.processes = &procs;
  return troupe::inbatch_parallel(rt, troupe::inits::indices, method, keep_outcomes, options);
}

std::vector<int> values(const outcomes_of_int& out) {
  std::vector<int> v;
  for (const auto& o : out)
    v.push_back(o.failed() ? -1 : o.value());
  return v;
}

TEST_F(process_pool_test, inbatch_processes_equal_threads_and_never_touch_the_callers_batch) {
  troupe::process_pool procs{rt, {.workers = 2}};
  auto action = on_processes(rt, inbatch_square, procs, {.n_workers = 2});
  ten_batch b;
  const auto in_processes = values(action(b));
  EXPECT_EQ(b.data, ten_batch{}.data) << "a worker's change reached the caller's batch";
  const auto on_threads = values(action.call(b, {.target = troupe::inbatch_target::threads}));
  EXPECT_EQ(in_processes, on_threads);
  EXPECT_EQ(in_processes, (std::vector<int>{0, 1, 4, 9, 16, 25, 36, 49, 64, 81}));
}

TEST_F(process_pool_test, inbatch_processes_give_each_failure_back_as_its_own_type) {
  troupe::process_pool procs{rt, {.workers = 2}};
  auto action = on_processes(rt, inbatch_out_of_range_at_3, procs);
  ten_batch b;
  const auto out = action(b);
  EXPECT_EQ(values(out), (std::vector<int>{0, 1, 2, -1, 4, 5, 6, 7, 8, 9}));
  try {
    (void)out[3].value();
    FAIL() << "no exception";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "bad 3");
    ASSERT_NE(troupe::origin_of(e), nullptr);
    EXPECT_NE(troupe::origin_of(e)->worker().find("pid"), std::string::npos);
  }
}

TEST_F(process_pool_test, inbatch_a_killed_worker_fails_its_item_with_worker_lost_and_returns) {
  troupe::process_pool procs{rt, {.workers = 2}};
  auto action = on_processes(rt, inbatch_stall_at_3, procs, {.chunksize = 1});
  const auto path = troupe::testing::temp_path("inbatch-stall");
  ten_batch b;
  auto running = std::async(std::launch::async, [&] { return action(b, path); });
  const int pid = troupe::testing::read_pid(path);
  ASSERT_GT(pid, 0) << "item 3 never started";
  ::kill(pid, SIGKILL);
  ASSERT_EQ(running.wait_for(60s), std::future_status::ready) << "the call hung";
  const auto out = running.get();
  EXPECT_EQ(values(out), (std::vector<int>{0, 1, 2, -1, 4, 5, 6, 7, 8, 9}));
  EXPECT_THROW((void)out[3].value(), troupe::worker_lost);
}

TEST_F(process_pool_test, inbatch_processes_take_extras_per_item_values_and_named_arguments) {
  troupe::process_pool procs{rt, {.workers = 2}};
  auto action = on_processes(rt, inbatch_scaled, procs);
  ten_batch b;
  EXPECT_EQ(values(action.call(b, {.named = {{"k", 2}}}, 3)),
            (std::vector<int>{0, 6, 12, 18, 24, 30, 36, 42, 48, 54}));
  EXPECT_EQ(values(action.call(b, {.named = {{"k", 1}}},
                               troupe::per_item{std::vector{1, 1, 1, 1, 1, 1, 1, 1, 1, -1}})),
            (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, -9}));
}

TEST_F(process_pool_test, inbatch_processes_keep_their_own_pool_across_calls) {
  auto action =
    troupe::inbatch_parallel(rt, troupe::inits::indices, inbatch_pid, keep_outcomes,
                             {.target = troupe::inbatch_target::processes, .n_workers = 2});
  ten_batch b;
  std::set<int> pids;
  for (int call = 0; call < 3; ++call)
    for (int pid : values(action(b)))
      pids.insert(pid);
  EXPECT_LE(pids.size(), 2u) << "worker processes were started per call";
  EXPECT_EQ(pids.count(getpid()), 0u);
  EXPECT_EQ(pids.count(-1), 0u);
}

TEST_F(process_pool_test, inbatch_every_message_to_a_worker_gets_a_fresh_copy_of_the_batch) {
  troupe::process_pool procs{rt, {.workers = 1}};
  auto action = on_processes(rt, inbatch_first_then_scribble, procs, {.chunksize = 1});
  ten_batch b;
  for (int call = 0; call < 2; ++call)
    EXPECT_EQ(values(action(b)), std::vector<int>(10, 0)) << "one chunk saw another's change";
}

/// This process's segments in /dev/shm (its workers' heartbeats are among them, one each).
std::size_t segments_of_this_process() {
  const auto mine = "troupe.seg." + std::to_string(getpid()) + ".";
  std::size_t segments = 0;
  for (const auto& entry : std::filesystem::directory_iterator{"/dev/shm"})
    segments += entry.path().filename().string().rfind(mine, 0) == 0 ? 1 : 0;
  return segments;
}

TROUPE_TASK(inbatch_nap, [](int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds{ms});
  return ms;
});

TEST_F(process_pool_test, inbatch_keeps_one_segment_for_its_batches_and_it_goes_with_the_action) {
  troupe::process_pool procs{rt, {.workers = 2}};
  // Both workers started first (a worker starts with its first task, its heartbeat segment
  // before its pid is known): what is counted below is then the action's alone.
  (void)procs.map(inbatch_nap, std::vector<int>{100, 100, 100, 100}, 1);
  ASSERT_EQ(procs.worker_pids().size(), 2u);
  const auto workers = segments_of_this_process();
  {
    auto action = on_processes(rt, inbatch_read_only, procs);
    ten_batch b;
    EXPECT_EQ(values(action(b)), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
    b.data.assign(10, 7); // the next call's batch in the same segment: workers read it anew
    EXPECT_EQ(values(action(b)), std::vector<int>(10, 8));
    EXPECT_EQ(segments_of_this_process(), workers + 1)
      << "calls of one action should share one segment";
  }
  EXPECT_EQ(segments_of_this_process(), workers) << "the action's segment outlived it";
}

TEST_F(process_pool_test, inbatch_a_pool_that_takes_remote_nodes_gets_the_batch_in_each_message) {
  troupe::process_pool procs{rt, {.workers = 2, .remote_secret = "inbatch-test"}};
  ASSERT_NE(procs.listen_port(), 0);
  auto action = on_processes(rt, inbatch_read_only, procs);
  ten_batch b;
  EXPECT_EQ(values(action(b)), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
}

TEST_F(process_pool_test, inbatch_processes_take_items_components_and_item_args) {
  troupe::process_pool procs{rt, {.workers = 2}};
  ten_batch b;
  const troupe::inbatch_options on_procs{.target = troupe::inbatch_target::processes,
                                         .processes = &procs};
  auto items = troupe::inbatch_parallel(
    rt,
    [](ten_batch& batch) {
      std::vector<std::tuple<int, std::vector<float>>> out;
      for (std::size_t i = 0; i < batch.size(); ++i)
        out.emplace_back(batch[i], batch.images[i]);
      return out;
    },
    inbatch_item_plus_row, keep_outcomes, on_procs);
  EXPECT_EQ(values(items(b)), (std::vector<int>{0, 11, 22, 33, 44, 55, 66, 77, 88, 99}));

  auto rows = troupe::inbatch_parallel(
    rt,
    [](ten_batch& batch) {
      std::vector<troupe::item_args<std::vector<float>>> out;
      for (const auto& row : batch.component("masks"))
        out.push_back({std::tuple{row}, troupe::named_args{{"k", 3}}});
      return out;
    },
    inbatch_row_times_k, keep_outcomes, on_procs);
  EXPECT_EQ(values(rows(b)), (std::vector<int>{0, 3, 6, 9, 12, 15, 18, 21, 24, 27}));
}

TEST_F(process_pool_test, inbatch_processes_take_indices_in_any_order_and_repeated) {
  troupe::process_pool procs{rt, {.workers = 2}};
  ten_batch b;
  // One message each: a consecutive run that breaks off, and indices out of order and repeated.
  for (const auto chunksize : {std::size_t{7}, std::size_t{1}}) {
    auto action = troupe::inbatch_parallel(
      rt, std::vector<std::size_t>{0, 1, 2, 7, 3, 3, 9}, inbatch_square, keep_outcomes,
      {.target = troupe::inbatch_target::processes, .chunksize = chunksize, .processes = &procs});
    EXPECT_EQ(values(action(b)), (std::vector<int>{0, 1, 4, 49, 9, 9, 81})) << chunksize;
  }
}

TEST_F(process_pool_test, inbatch_processes_with_no_items_send_nothing) {
  troupe::process_pool procs{rt, {.workers = 1}};
  auto action =
    troupe::inbatch_parallel(rt, std::vector<std::size_t>{}, inbatch_square, keep_outcomes,
                             {.target = troupe::inbatch_target::processes, .processes = &procs});
  ten_batch b;
  EXPECT_EQ(action(b).size(), 0u);
  EXPECT_TRUE(procs.worker_pids().empty()) << "a worker was started for no items";
}

TEST_F(process_pool_test, inbatch_processes_n_workers_caps_the_items_running_at_once) {
  troupe::process_pool procs{rt, {.workers = 2}};
  auto action = troupe::inbatch_parallel(
    rt, troupe::inits::indices, inbatch_interval,
    [](ten_batch&, troupe::outcomes<std::pair<long long, long long>>& out) {
      std::vector<std::pair<long long, long long>> spans;
      for (const auto& o : out)
        spans.push_back(o.value());
      std::sort(spans.begin(), spans.end());
      return spans;
    },
    {.target = troupe::inbatch_target::processes,
     .n_workers = 1,
     .chunksize = 1,
     .processes = &procs});
  ten_batch b;
  const auto spans = action(b);
  ASSERT_EQ(spans.size(), 10u);
  for (std::size_t i = 1; i < spans.size(); ++i)
    EXPECT_LE(spans[i - 1].second, spans[i].first)
      << "items " << i - 1 << " and " << i << " ran at once with n_workers = 1";
}

TEST_F(process_pool_test, inbatch_processes_without_post_throw_parallel_action_failed) {
  troupe::process_pool procs{rt, {.workers = 2}};
  auto action =
    troupe::inbatch_parallel(rt, troupe::inits::indices, inbatch_out_of_range_at_3,
                             {.target = troupe::inbatch_target::processes, .processes = &procs});
  ten_batch b;
  try {
    action(b);
    FAIL() << "no parallel_action_failed";
  } catch (const troupe::parallel_action_failed& e) {
    EXPECT_EQ(e.failed_count(), 1u);
    EXPECT_EQ(e.first().first, 3u);
    EXPECT_THROW(std::rethrow_exception(e.first().second), std::out_of_range);
  }
}

TEST_F(process_pool_test, inbatch_processes_refuse_a_method_that_is_not_registered) {
  auto action = troupe::inbatch_parallel(rt, troupe::inits::indices,
                                         [](ten_batch&, std::size_t ix) { return ix; });
  ten_batch b;
  EXPECT_THROW(action.call(b, {.target = troupe::inbatch_target::processes}),
               troupe::invalid_argument);
}

} // namespace

#include "../worker_program_main.hpp" // this binary is also the pool's worker program
