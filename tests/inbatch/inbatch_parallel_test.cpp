// inbatch_parallel on the threads, sequential and async targets: batchflow's acceptance tests
// (other_seeds.md §3c, 1-13 and 15). The processes target: inbatch_processes_test.cpp.
#include "troupe/inbatch/inbatch_parallel.hpp"

#include "inbatch_test_support.hpp"
#include "pool_test_support.hpp"

#include <sched.h>

#include <atomic>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

namespace {

class inbatch_parallel_test : public troupe::testing::pool_test {};
using troupe::testing::ten_batch;
using namespace std::chrono_literals;

using outcomes_of_int = troupe::outcomes<int>;

/// A post that returns the values (or -1 for a failed item).
const auto values_of = [](ten_batch&, outcomes_of_int& out) {
  std::vector<int> values;
  for (const auto& o : out)
    values.push_back(o.failed() ? -1 : o.value());
  return values;
};

const auto square = [](ten_batch&, std::size_t ix) { return static_cast<int>(ix * ix); };

/// Records how many calls run at once.
struct concurrency_meter {
  std::atomic<int> now{0}, peak{0};
  void enter() {
    const int n = ++now;
    for (int seen = peak.load(); n > seen && !peak.compare_exchange_weak(seen, n);) {
    }
  }
  void leave() { --now; }
};

TEST_F(inbatch_parallel_test, indices_on_threads_give_post_the_squares_in_index_order) {
  auto action = troupe::inbatch_parallel(
    rt, troupe::inits::indices,
    [](ten_batch&, std::size_t ix) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2 * (9 - ix))); // early items last
      return static_cast<int>(ix * ix);
    },
    values_of, {.n_workers = 10});
  ten_batch b;
  EXPECT_EQ(action(b), (std::vector<int>{0, 1, 4, 9, 16, 25, 36, 49, 64, 81}));
}

TEST_F(inbatch_parallel_test, items_give_the_method_each_item_and_component_each_row) {
  ten_batch b;
  auto items = troupe::inbatch_parallel(
    rt, troupe::inits::items, [](ten_batch&, int item) { return item; }, values_of);
  EXPECT_EQ(items(b), (std::vector<int>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90}));

  auto rows = troupe::inbatch_parallel(
    rt, troupe::inits::component{"images"},
    [](ten_batch&, const std::vector<float>& row) { return static_cast<int>(row.at(0)) + 100; },
    values_of);
  EXPECT_EQ(rows(b), (std::vector<int>{100, 101, 102, 103, 104, 105, 106, 107, 108, 109}));

  auto unknown = troupe::inbatch_parallel(rt, troupe::inits::component{"labels"},
                                          [](ten_batch&, const std::vector<float>&) {});
  EXPECT_THROW(unknown(b), troupe::invalid_argument);
}

TEST_F(inbatch_parallel_test, run_once_calls_once_with_only_the_extras_and_waits_for_async_work) {
  std::atomic<int> calls{0};
  std::atomic<bool> finished{false};
  auto action = troupe::inbatch_parallel(rt, troupe::inits::run_once,
                                         [&](ten_batch&, int extra) {
                                           ++calls;
                                           EXPECT_EQ(extra, 7);
                                           return std::async(std::launch::async, [&] {
                                             std::this_thread::sleep_for(30ms);
                                             finished = true;
                                           });
                                         },
                                         {.target = troupe::inbatch_target::async});
  ten_batch b;
  action(b, 7);
  EXPECT_EQ(calls.load(), 1);
  EXPECT_TRUE(finished.load()) << "the call returned before the async method completed";
}

TEST_F(inbatch_parallel_test, custom_init_elements_give_positional_named_both_or_one_argument) {
  ten_batch b;
  using troupe::named_args;
  auto positional = troupe::inbatch_parallel(
    rt, [](ten_batch&) { return std::vector{troupe::positional(std::string{"d"}, 1, 2.5, 'x')}; },
    [](ten_batch&, const std::string& data, int i, double a, char c) {
      return data + std::to_string(i) + std::to_string(a).substr(0, 3) + c;
    },
    [](ten_batch&, troupe::outcomes<std::string>& out) { return out.at(0).value(); });
  EXPECT_EQ(positional(b), "d12.5x");

  const auto with_named = [](ten_batch&, const named_args& named) {
    return named.get<int>("k") * 10 + named.get_or("extra", 0);
  };
  auto named_only = troupe::inbatch_parallel(
    rt,
    [](ten_batch&) {
      return std::vector{named_args{{"k", 4}}};
    },
    with_named, values_of);
  EXPECT_EQ(named_only(b), (std::vector<int>{40}));

  auto both = troupe::inbatch_parallel(
    rt,
    [](ten_batch&) {
      return std::vector{troupe::item_args{std::tuple{3}, named_args{{"k", 2}}}};
    },
    [](ten_batch&, int i, const named_args& named) { return i + 100 * named.get<int>("k"); },
    values_of);
  EXPECT_EQ(both(b), (std::vector<int>{203}));

  auto scalar = troupe::inbatch_parallel(
    rt,
    [](ten_batch&) {
      return std::vector<std::vector<int>>{{1, 2, 3}};
    },
    [](ten_batch&, const std::vector<int>& one) { return static_cast<int>(one.size()); },
    values_of);
  EXPECT_EQ(scalar(b), (std::vector<int>{3})) << "a non-tuple element is one argument";
}

TEST_F(inbatch_parallel_test, extras_follow_the_init_arguments_and_call_named_arguments_win) {
  ten_batch b;
  using troupe::named_args;
  auto action = troupe::inbatch_parallel(
    rt,
    [](ten_batch&) {
      return std::vector{troupe::item_args{std::tuple{1}, named_args{{"k", 1}, {"keep", 5}}}};
    },
    [](ten_batch&, int init_arg, int extra, const named_args& named) {
      return init_arg * 1000 + extra * 100 + named.get<int>("k") * 10 + named.get<int>("keep");
    },
    values_of);
  EXPECT_EQ(action.call(b, {.named = {{"k", 9}}}, 2), (std::vector<int>{1295}));
}

TEST_F(inbatch_parallel_test, decorator_extras_reach_init_and_post_never_the_method) {
  ten_batch b;
  using troupe::named_args;
  std::atomic<bool> method_saw_it{false};
  auto action = troupe::inbatch_parallel(
    rt,
    [](ten_batch& batch, const named_args& named) {
      EXPECT_EQ(named.get<std::string>("mode"), "call wins");
      EXPECT_EQ(named.get<int>("size"), 3);
      return std::vector<std::size_t>(static_cast<std::size_t>(named.get<int>("size")),
                                      batch.size());
    },
    [&](ten_batch&, std::size_t, const named_args& named) {
      if (named.contains("size"))
        method_saw_it = true;
      return named.get<std::string>("mode") == "call wins" ? 1 : 0;
    },
    [](ten_batch&, outcomes_of_int& out, const named_args& named) {
      return static_cast<int>(out.size()) * 100 + named.get<int>("size");
    },
    {.extras = {{"size", 3}, {"mode", "decorator"}}});
  EXPECT_EQ(action.call(b, {.named = {{"mode", "call wins"}}}), 303);
  EXPECT_FALSE(method_saw_it.load()) << "a decorator extra reached the method";
}

TEST_F(inbatch_parallel_test, per_item_values_and_per_item_functions) {
  ten_batch b;
  auto action = troupe::inbatch_parallel(
    rt, troupe::inits::indices, [](ten_batch&, std::size_t, int v, int drawn) { return v + drawn; },
    values_of);
  int draws = 0;
  const auto got = action(b, troupe::per_item{std::vector{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
                          troupe::per_item_fn{[&] { return 1000 * ++draws; }});
  EXPECT_EQ(draws, 10);
  for (std::size_t i = 0; i < 10; ++i)
    EXPECT_EQ(got[i], static_cast<int>(i + 1 + 1000 * (i + 1)));
  EXPECT_THROW(
    action(b, troupe::per_item{std::vector{1, 2}}, troupe::per_item_fn{[] { return 0; }}),
    troupe::invalid_argument)
    << "two per_item values for ten items";
}

TEST_F(inbatch_parallel_test, n_workers_caps_concurrency_and_defaults_to_four_per_cpu) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  ASSERT_EQ(sched_getaffinity(0, sizeof cpus, &cpus), 0);
  EXPECT_EQ(troupe::default_inbatch_workers(), 4u * static_cast<std::size_t>(CPU_COUNT(&cpus)));

  troupe::thread_pool eight{rt, {.workers = 8}};
  for (auto* pool : {static_cast<troupe::thread_pool*>(nullptr), &eight}) {
    concurrency_meter meter;
    auto action = troupe::inbatch_parallel(rt, troupe::inits::indices,
                                           [&](ten_batch&, std::size_t) {
                                             meter.enter();
                                             std::this_thread::sleep_for(10ms);
                                             meter.leave();
                                           },
                                           {.n_workers = 3, .threads = pool});
    ten_batch b;
    action(b);
    EXPECT_LE(meter.peak.load(), 3);
    EXPECT_GE(meter.peak.load(), 2) << "the items did not run in parallel";
    meter.peak = 0;
    action.call(b, {.n_workers = 1});
    EXPECT_EQ(meter.peak.load(), 1) << "a call's n_workers";
  }
}

TEST_F(inbatch_parallel_test, a_failing_item_is_kept_in_order_and_others_still_run) {
  ten_batch b;
  auto action = troupe::inbatch_parallel(
    rt, troupe::inits::indices,
    [](ten_batch&, std::size_t ix) {
      if (ix == 3)
        throw std::runtime_error("bad 3");
      return static_cast<int>(ix * ix);
    },
    [](ten_batch&, outcomes_of_int& out) { return out; });
  const auto out = action(b);
  ASSERT_EQ(out.size(), 10u);
  for (std::size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(out[i].failed(), i == 3) << i;
    if (i != 3) {
      EXPECT_EQ(out[i].value(), static_cast<int>(i * i));
    }
  }
  EXPECT_THROW(
    try { (void)out[3].value(); } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "bad 3");
      throw;
    },
    std::runtime_error);
  EXPECT_TRUE(troupe::any_action_failed(out));
  auto fine = troupe::inbatch_parallel(rt, troupe::inits::indices, square,
                                       [](ten_batch&, outcomes_of_int& o) { return o; });
  EXPECT_FALSE(troupe::any_action_failed(fine(b)));
}

TEST_F(inbatch_parallel_test, without_post_a_failure_throws_a_count_and_success_returns_the_batch) {
  ten_batch b;
  auto failing =
    troupe::inbatch_parallel(rt, troupe::inits::indices, [](ten_batch&, std::size_t ix) {
      if (ix == 3 || ix == 7)
        throw std::runtime_error("bad " + std::to_string(ix));
    });
  try {
    failing(b);
    FAIL() << "no parallel_action_failed";
  } catch (const troupe::parallel_action_failed& e) {
    EXPECT_EQ(e.failed_count(), 2u);
    EXPECT_EQ(e.first().first, 3u);
    const std::string what = e.what();
    EXPECT_NE(what.find("2 of 10"), std::string::npos) << what;
    EXPECT_NE(what.find("bad 3"), std::string::npos) << what;
  }
  auto fine = troupe::inbatch_parallel(
    rt, troupe::inits::indices, [](ten_batch& batch, std::size_t ix) { batch.data[ix] *= 2; });
  auto& r = fine(b);
  EXPECT_EQ(&r, &b);
  EXPECT_EQ(b.data[9], 18) << "threads work on the caller's batch";
}

TEST_F(inbatch_parallel_test, sequential_debug_propagates_the_first_exception_and_stops) {
  ten_batch b;
  std::vector<std::size_t> ran;
  const auto method = [&](ten_batch&, std::size_t ix) {
    ran.push_back(ix);
    if (ix == 3)
      throw std::runtime_error("bad 3");
    return 0;
  };
  auto debug = troupe::inbatch_parallel(
    rt, troupe::inits::indices, method, [](ten_batch&, outcomes_of_int& o) { return o; },
    {.target = troupe::inbatch_target::sequential, .debug = true});
  EXPECT_THROW(debug(b), std::runtime_error);
  EXPECT_EQ(ran, (std::vector<std::size_t>{0, 1, 2, 3})) << "items after the failure ran";

  ran.clear();
  auto plain = troupe::inbatch_parallel(rt, troupe::inits::indices, method,
                                        [](ten_batch&, outcomes_of_int& o) { return o; },
                                        {.target = troupe::inbatch_target::sequential});
  const auto out = plain(b);
  EXPECT_EQ(ran.size(), 10u);
  EXPECT_TRUE(out[3].failed());
  EXPECT_EQ(std::count_if(out.begin(), out.end(), [](const auto& o) { return o.failed(); }), 1);
}

TEST_F(inbatch_parallel_test, configuration_errors_are_typed_and_name_the_culprit) {
  const auto expect_error = [](auto&& make, const std::string& culprit) {
    try {
      make();
      ADD_FAILURE() << "no invalid_argument naming " << culprit;
    } catch (const troupe::invalid_argument& e) {
      EXPECT_NE(std::string{e.what()}.find(culprit), std::string::npos) << e.what();
    }
  };
  ten_batch b;
  expect_error(
    [&] { troupe::inbatch_parallel(rt, troupe::inits::indices, square, {.debug = true}); },
    "debug");
  expect_error(
    [&] {
      auto action = troupe::inbatch_parallel(rt, troupe::inits::indices, square);
      action.call(b, {.debug = true});
    },
    "debug");
  expect_error([] { (void)troupe::inbatch_target_named("gpu"); }, "'gpu'");
  EXPECT_EQ(troupe::inbatch_target_named("mpc"), troupe::inbatch_target::processes);
  EXPECT_EQ(troupe::inbatch_target_named("for"), troupe::inbatch_target::sequential);
  expect_error(
    [&] {
      troupe::inbatch_parallel(rt, troupe::inits::indices, square,
                               {.target = static_cast<troupe::inbatch_target>(42)});
    },
    "42");
  expect_error(
    [&] { troupe::inbatch_parallel(rt, std::function<std::vector<int>(ten_batch&)>{}, square); },
    "init is missing");
  expect_error(
    [&] { troupe::inbatch_parallel(rt, troupe::inits::indices, square, {.n_workers = 0}); },
    "n_workers");
  expect_error(
    [&] { troupe::inbatch_parallel(rt, troupe::inits::indices, square, {.chunksize = 0}); },
    "chunksize");
  expect_error(
    [&] {
      troupe::inbatch_parallel(rt, troupe::inits::indices, square,
                               {.target = troupe::inbatch_target::processes});
    },
    "TROUPE_TASK");
  expect_error(
    [&] {
      auto action = troupe::inbatch_parallel(rt, troupe::inits::indices, square);
      action.call(b, {.named = {{"scale", 2}}});
    },
    "scale");
  expect_error(
    [&] {
      auto action = troupe::inbatch_parallel(rt, troupe::inits::indices, square);
      action.call(b, {.target = troupe::inbatch_target::async});
    },
    "async");
}

/// A result type without a default constructor (kept in std::optional slots).
struct labelled {
  explicit labelled(int v) : value(v) {}
  int value;
};

TEST_F(inbatch_parallel_test, a_post_can_take_all_values_at_once_or_hear_of_every_failure) {
  ten_batch b;
  auto ints = troupe::inbatch_parallel(
    rt, troupe::inits::indices, square,
    [](ten_batch&, outcomes_of_int& out) { return std::move(out).values(); });
  EXPECT_EQ(ints(b), (std::vector<int>{0, 1, 4, 9, 16, 25, 36, 49, 64, 81}));

  auto objects = troupe::inbatch_parallel(
    rt, troupe::inits::indices, [](ten_batch&, std::size_t ix) { return labelled{int(ix)}; },
    [](ten_batch&, troupe::outcomes<labelled>& out) { return std::move(out).values(); });
  EXPECT_EQ(objects(b).back().value, 9);

  auto flags = troupe::inbatch_parallel(
    rt, troupe::inits::indices, [](ten_batch&, std::size_t ix) { return ix % 2 == 0; },
    [](ten_batch&, troupe::outcomes<bool>& out) { return std::move(out).values(); });
  EXPECT_EQ(flags(b),
            (std::vector<bool>{true, false, true, false, true, false, true, false, true, false}));

  auto failing = troupe::inbatch_parallel(
    rt, troupe::inits::indices,
    [](ten_batch&, std::size_t ix) {
      if (ix == 4)
        throw std::runtime_error("bad 4");
      return 0;
    },
    [](ten_batch&, outcomes_of_int& out) { return std::move(out).values(); });
  try {
    failing(b);
    FAIL() << "values() of a failed call returned";
  } catch (const troupe::parallel_action_failed& e) {
    EXPECT_EQ(e.first().first, 4u);
  }
}

TEST_F(inbatch_parallel_test, an_init_with_no_elements_runs_nothing_on_every_target) {
  ten_batch b;
  std::atomic<int> calls{0};
  auto action = troupe::inbatch_parallel(
    rt, std::vector<std::size_t>{},
    [&](ten_batch&, std::size_t) {
      ++calls;
      return std::async(std::launch::deferred, [] { return 1; });
    },
    [](ten_batch&, outcomes_of_int& out) { return out.size(); });
  for (const auto target : {troupe::inbatch_target::threads, troupe::inbatch_target::sequential,
                            troupe::inbatch_target::async})
    EXPECT_EQ(action.call(b, {.target = target}), 0u);
  EXPECT_EQ(calls.load(), 0);
}

TEST_F(inbatch_parallel_test, exceptions_from_init_and_post_reach_the_caller) {
  ten_batch b;
  auto bad_init = troupe::inbatch_parallel(
    rt, [](ten_batch&) -> std::vector<int> { throw std::length_error("no items"); }, square);
  EXPECT_THROW(bad_init(b), std::length_error);
  auto bad_post = troupe::inbatch_parallel(
    rt, troupe::inits::indices, square,
    [](ten_batch&, outcomes_of_int&) -> int { throw std::range_error("cannot assemble"); });
  EXPECT_THROW(bad_post(b), std::range_error);
}

TEST_F(inbatch_parallel_test, a_call_can_move_the_work_from_threads_to_the_calling_thread) {
  ten_batch b;
  std::mutex mutex;
  std::set<std::thread::id> threads;
  auto action = troupe::inbatch_parallel(rt, troupe::inits::indices, [&](ten_batch&, std::size_t) {
    const std::lock_guard lock{mutex};
    threads.insert(std::this_thread::get_id());
  });
  action.call(b, {.target = troupe::inbatch_target::sequential});
  EXPECT_EQ(threads, std::set{std::this_thread::get_id()});
  threads.clear();
  action(b);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u) << "threads ran on the caller";
}

TEST_F(inbatch_parallel_test, the_action_keeps_its_pool_across_calls) {
  ten_batch b;
  std::mutex mutex;
  std::set<int> workers;
  auto action = troupe::inbatch_parallel(rt, troupe::inits::indices,
                                         [&](ten_batch&, std::size_t) {
                                           const std::lock_guard lock{mutex};
                                           workers.insert(troupe::testing::thread_serial());
                                         },
                                         {.n_workers = 2});
  for (int call = 0; call < 5; ++call)
    action(b);
  EXPECT_LE(workers.size(), 2u) << "a pool was started per call";
}

TEST_F(inbatch_parallel_test, async_items_come_back_in_order_with_failures_captured) {
  ten_batch b;
  troupe::thread_pool helpers{rt, {.workers = 4}};
  concurrency_meter started;
  auto action = troupe::inbatch_parallel(
    rt, troupe::inits::indices,
    [&](ten_batch&, std::size_t ix) {
      started.enter();
      return helpers.apply_async([&started, ix] {
        std::this_thread::sleep_for(std::chrono::milliseconds(2 * (10 - ix)));
        started.leave();
        if (ix == 3)
          throw std::runtime_error("bad 3");
        return static_cast<int>(ix * ix);
      });
    },
    values_of, {.target = troupe::inbatch_target::async, .n_workers = 4});
  EXPECT_EQ(action(b), (std::vector<int>{0, 1, 4, -1, 16, 25, 36, 49, 64, 81}));
  EXPECT_LE(started.peak.load(), 4) << "more items awaited at once than n_workers";
}

} // namespace
