// staged/: PhiML's parallel_compute acceptance cases (other_seeds.md §1c) on a thread pool and
// on the host; the process pool's in staged_process_test.cpp.
#include "troupe/pools/thread_pool.hpp"
#include "troupe/staged/errors.hpp"
#include "troupe/staged/parallel_compute.hpp"

#include "plan_support.hpp"

#include <gtest/gtest.h>

#include <xtensor/xmath.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

namespace troupe::staged {
namespace {

/// data = [1, 2, 3] along batch dim "data".
tensor data_123() { return {xt::xarray<double>{1, 2, 3}, {batch("data", 3)}}; }

tensor twice(const tensor& t) { return {2.0 * t.values(), t.dims()}; }

/// The threads that computed, and how often each property ran.
struct observed {
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::map<std::string, int> runs;
  void saw(const std::string& property) {
    std::lock_guard guard{mutex};
    threads.insert(std::this_thread::get_id());
    ++runs[property];
  }
};

/// individual = 2 data; mean (needs the batch whole); normalized = individual - mean.
std::shared_ptr<const schema> normalizing(observed& seen, bool persistent_mean = false) {
  schema s{"normalizing"};
  s.field("data");
  s.property({.name = "individual", .field_deps = {"data"}, .compute = [&](const record& r) {
                seen.saw("individual");
                return twice(r.get("data"));
              }});
  s.property({.name = "mean",
              .property_deps = {"individual"},
              .required_dims = dim_filter::kind(dim_kind::batch),
              .persistent = persistent_mean,
              .compute = [&](const record& r) {
                seen.saw("mean");
                return tensor::scalar(xt::mean(r.get("individual").values())());
              }});
  s.property({.name = "normalized",
              .property_deps = {"individual", "mean"},
              .compute = [&](const record& r) {
                seen.saw("normalized");
                const auto& x = r.get("individual");
                return tensor{x.values() - r.get("mean").values()(), x.dims()};
              }});
  return std::make_shared<const schema>(std::move(s));
}

class staged_compute : public ::testing::Test {
protected:
  runtime rt;
  thread_pool pool{rt, {.workers = 3}};
  observed seen;
};

// §1c 1.
TEST_F(staged_compute, a_parallel_property_is_computed_slice_by_slice) {
  schema s{"one"};
  s.field("data").property(
    {.name = "result", .field_deps = {"data"}, .compute = [&](const record& r) {
       seen.saw("result");
       return twice(r.get("data"));
     }});
  record r{std::make_shared<const schema>(std::move(s)), {{"data", data_123()}}};
  const auto plan = parallel_compute(r, {"result"}, {.max_workers = 3}, pool);
  ASSERT_EQ(plan.stages.size(), 1u);
  EXPECT_EQ(plan.stages[0].distributed, (shape{batch("data", 3)}));
  EXPECT_EQ(plan.workers, 3u);
  EXPECT_EQ(r.get("result").values(), (xt::xarray<double>{2, 4, 6}));
  EXPECT_EQ(r.get("result").dims(), (shape{batch("data", 3)}));
  EXPECT_EQ(seen.runs["result"], 3) << "once a slice";
  EXPECT_FALSE(seen.threads.contains(std::this_thread::get_id()));
}

// §1c 2: a chain of equal distribution is one stage; its intermediate never leaves the slices.
TEST_F(staged_compute, a_same_stage_intermediate_never_reaches_the_record) {
  schema s{"chain"};
  s.field("data");
  s.property({.name = "tmp", .field_deps = {"data"}, .compute = [](const record& r) {
                return twice(r.get("data"));
              }});
  s.property({.name = "result", .property_deps = {"tmp"}, .compute = [](const record& r) {
                const auto& t = r.get("tmp");
                return tensor{t.values() + 1.0, t.dims()};
              }});
  record r{std::make_shared<const schema>(std::move(s)), {{"data", data_123()}}};
  const auto plan = parallel_compute(r, {"result"}, {.keep_intermediate = true}, pool);
  EXPECT_EQ(stages_of(plan), (std::vector<std::vector<std::string>>{{"tmp", "result"}}));
  EXPECT_EQ(r.get("result").values(), (xt::xarray<double>{3, 5, 7}));
  EXPECT_EQ(r.cached(), (std::vector<std::string>{"result"}));
}

// §1c 3, 4 and 6: workers, the host, workers; the host's scalar goes to every slice; what no
// later stage reads is dropped unless kept.
TEST_F(staged_compute, a_host_stage_between_parallel_ones) {
  record r{normalizing(seen), {{"data", data_123()}}};
  const auto plan = parallel_compute(r, {"normalized"}, {}, pool);
  EXPECT_EQ(stages_of(plan),
            (std::vector<std::vector<std::string>>{{"individual"}, {"mean"}, {"normalized"}}));
  EXPECT_FALSE(plan.stages[0].on_host());
  EXPECT_TRUE(plan.stages[1].on_host());
  EXPECT_EQ(plan.stages[2].inputs, (std::vector<std::string>{"individual", "mean"}));
  EXPECT_EQ(r.get("normalized").values(), (xt::xarray<double>{-2, 0, 2}));
  EXPECT_EQ(r.cached(), (std::vector<std::string>{"normalized"}));
  EXPECT_EQ(seen.runs["mean"], 1);

  record kept{normalizing(seen), {{"data", data_123()}}};
  parallel_compute(kept, {"normalized"}, {.keep_intermediate = true}, pool);
  EXPECT_EQ(kept.cached(), (std::vector<std::string>{"individual", "mean", "normalized"}));
  EXPECT_EQ(kept.get("mean").values()(), 4.0);
}

TEST_F(staged_compute, the_host_stage_runs_on_the_calling_thread) {
  record r{normalizing(seen), {{"data", data_123()}}};
  parallel_compute(r, {"mean"}, {}, pool);
  EXPECT_EQ(r.get("mean").values()(), 4.0);
  EXPECT_EQ(r.cached(), (std::vector<std::string>{"mean"}));
  std::lock_guard guard{seen.mutex};
  EXPECT_TRUE(seen.threads.contains(std::this_thread::get_id())) << "mean, on the host";
  EXPECT_GT(seen.threads.size(), 1u) << "individual, on the pool";
}

TEST_F(staged_compute, a_persistent_property_stays_though_not_asked_for) {
  record r{normalizing(seen, true), {{"data", data_123()}}};
  parallel_compute(r, {"normalized"}, {}, pool);
  EXPECT_EQ(r.cached(), (std::vector<std::string>{"mean", "normalized"}));
}

// §1c 7.
TEST_F(staged_compute, a_value_cached_before_the_call_is_never_computed_nor_dropped) {
  record r{normalizing(seen), {{"data", data_123()}}};
  r.set_cached("individual", tensor{xt::xarray<double>{10, 20, 30}, {batch("data", 3)}});
  parallel_compute(r, {"normalized"}, {}, pool);
  EXPECT_EQ(seen.runs["individual"], 0);
  EXPECT_EQ(r.get("normalized").values(), (xt::xarray<double>{-10, 0, 10}));
  EXPECT_TRUE(r.is_cached("individual"));
}

// §1c 8.
TEST_F(staged_compute, reading_a_property_outside_parallel_compute) {
  record r{normalizing(seen), {{"data", data_123()}}};
  EXPECT_THROW((void)r.get("individual"), non_parallel_access);
  schema s{"direct"};
  s.field("data").property({.name = "doubled",
                            .field_deps = {"data"},
                            .on_direct_eval = direct_eval::host_compute,
                            .compute = [](const record& q) { return twice(q.get("data")); }});
  record d{std::make_shared<const schema>(std::move(s)), {{"data", data_123()}}};
  EXPECT_EQ(d.get("doubled").values(), (xt::xarray<double>{2, 4, 6}));
  EXPECT_TRUE(d.is_cached("doubled"));
}

// §1c 9.
TEST_F(staged_compute, no_workers_runs_everything_here_and_workers_are_capped_by_the_volume) {
  record r{normalizing(seen), {{"data", data_123()}}};
  const auto here = parallel_compute(r, {"normalized"}, {.max_workers = 0}, pool);
  EXPECT_EQ(here.workers, 0u);
  EXPECT_EQ(r.get("normalized").values(), (xt::xarray<double>{-2, 0, 2}));
  {
    std::lock_guard guard{seen.mutex};
    EXPECT_EQ(seen.threads, (std::set<std::thread::id>{std::this_thread::get_id()}));
  }
  record big{normalizing(seen), {{"data", data_123()}}};
  EXPECT_EQ(plan_compute(big, {"normalized"}, {.max_workers = 16}).workers, 3u);
}

// max_workers holds for a pool with more workers: never more slices at once.
TEST_F(staged_compute, no_more_slices_at_once_than_max_workers) {
  std::atomic<int> running{0}, most{0};
  schema s{"one_at_a_time"};
  s.field("data").property(
    {.name = "slow", .field_deps = {"data"}, .compute = [&](const record& r) {
       const int now = ++running;
       for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
       }
       std::this_thread::sleep_for(std::chrono::milliseconds{20});
       --running;
       return r.get("data");
     }});
  record r{std::make_shared<const schema>(std::move(s)), {{"data", data_123()}}};
  const auto plan = parallel_compute(r, {"slow"}, {.max_workers = 1}, pool); // pool: 3 workers
  EXPECT_EQ(plan.workers, 1u);
  EXPECT_EQ(most, 1);
  EXPECT_EQ(r.get("slow").values(), data_123().values());
}

/// value(example, time) = 10 example + time; result = 2 value.
std::shared_ptr<const schema> two_dims(observed& seen) {
  schema s{"two_dims"};
  s.field("value");
  s.property({.name = "result", .field_deps = {"value"}, .compute = [&](const record& r) {
                seen.saw("result");
                return twice(r.get("value"));
              }});
  s.property({.name = "over_time",
              .field_deps = {"value"},
              .required_dims = dim_filter::names({"time"}),
              .compute = [&](const record& r) {
                seen.saw("over_time");
                const auto& v = r.get("value");
                return tensor{xt::sum(v.values(), {v.dims().index_of("time")}), shape{}};
              }});
  return std::make_shared<const schema>(std::move(s));
}

tensor example_by_time() {
  return {xt::xarray<double>{{0, 1, 2}, {10, 11, 12}}, {batch("example", 2), batch("time", 3)}};
}

// §1c 10 and 11.
TEST_F(staged_compute, slices_over_two_dims_stack_back_into_both) {
  record r{two_dims(seen), {{"value", example_by_time()}}};
  parallel_compute(r, {"result"}, {}, pool);
  EXPECT_EQ(seen.runs["result"], 6);
  EXPECT_EQ(r.get("result").dims(), (shape{batch("example", 2), batch("time", 3)}));
  EXPECT_EQ(r.get("result").values(), 2.0 * example_by_time().values());

  const auto plan = parallel_compute(r, {"over_time"}, {}, pool);
  EXPECT_EQ(plan.stages[0].distributed, (shape{batch("example", 2)}));
  EXPECT_EQ(seen.runs["over_time"], 2);
  EXPECT_EQ(r.get("over_time").values(), (xt::xarray<double>{3, 33}));
}

// §1c 12: a stage is sent the fields its properties declare, and only those.
TEST_F(staged_compute, only_declared_fields_travel) {
  schema s{"fields"};
  s.field("a").field("b");
  s.property({.name = "from_a", .field_deps = {"a"}, .compute = [](const record& r) {
                return twice(r.get("a"));
              }});
  s.property({.name = "sneaky", .field_deps = {"a"}, .compute = [](const record& r) {
                return twice(r.get("b")); // b is not declared
              }});
  record r{std::make_shared<const schema>(std::move(s)), {{"a", data_123()}, {"b", data_123()}}};
  const auto plan = parallel_compute(r, {"from_a"}, {}, pool);
  EXPECT_EQ(plan.stages[0].fields, (std::vector<std::string>{"a"}));
  try {
    parallel_compute(r, {"sneaky"}, {}, pool);
    FAIL() << "an undeclared field was there";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("field 'b'"), std::string::npos) << e.what();
  }
}

// §1c 18.
TEST(staged_record, replace_keeps_the_caches_the_change_does_not_touch) {
  schema s{"replace"};
  s.field("a").field("b");
  const auto copy_of = [](const std::string& name) {
    return [name](const record& r) { return r.get(name); };
  };
  s.property({.name = "p_a", .field_deps = {"a"}, .compute = copy_of("a")});
  s.property({.name = "p_b", .field_deps = {"b"}, .compute = copy_of("b")});
  s.property(
    {.name = "p_ab", .field_deps = {"b"}, .property_deps = {"p_a"}, .compute = copy_of("b")});
  record r{std::make_shared<const schema>(std::move(s)), {{"a", data_123()}, {"b", data_123()}}};
  for (const auto* name : {"p_a", "p_b", "p_ab"})
    r.set_cached(name, tensor::scalar(1));
  const auto changed = r.replace({{"a", tensor::scalar(7)}});
  EXPECT_EQ(changed.cached(), (std::vector<std::string>{"p_b"}));
  EXPECT_EQ(changed.get("a").values()(), 7.0);
  EXPECT_EQ(r.copy().cached(), (std::vector<std::string>{"p_a", "p_ab", "p_b"}));
  EXPECT_THROW((void)r.replace({{"c", tensor::scalar(0)}}), troupe::invalid_argument);
}

// §1c 19 (the worker crash is in staged_process_test.cpp), and what else cannot be planned.
TEST_F(staged_compute, what_cannot_be_planned_is_invalid_plan) {
  record r{normalizing(seen), {{"data", data_123()}}};
  EXPECT_THROW(plan_compute(r, {"normalized"}, {.memory_limit = 1}), invalid_plan);
  EXPECT_THROW(plan_compute(r, {"nothing"}), invalid_plan);
  schema s{"circle"};
  s.field("data");
  s.property(
    {.name = "p", .property_deps = {"q"}, .compute = [](const record& q) { return q.get("q"); }});
  s.property(
    {.name = "q", .property_deps = {"p"}, .compute = [](const record& q) { return q.get("p"); }});
  record c{std::make_shared<const schema>(std::move(s)), {{"data", data_123()}}};
  EXPECT_THROW(parallel_compute(c, {"p"}, {}, pool), invalid_plan);
  EXPECT_THROW(record(r.definition_ptr(), {}), troupe::invalid_argument) << "data not given";
}

// PhiML splits nothing, silently, along a dim the record lacks; troupe names it, unless asked.
TEST_F(staged_compute, an_unknown_parallel_dim_is_refused_by_name) {
  record r{normalizing(seen), {{"data", data_123()}}};
  try {
    (void)plan_compute(r, {"normalized"}, {.parallel_dims = dim_filter::names({"exmaple"})});
    FAIL() << "a misspelt parallel dim was accepted";
  } catch (const troupe::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'exmaple'"), std::string::npos) << what;
    EXPECT_NE(what.find("its dims: " + r.dims().names().front()), std::string::npos) << what;
  }
  const auto silent = plan_compute(
    r, {"normalized"},
    {.parallel_dims = dim_filter::names({"exmaple"}), .ignore_unknown_parallel_dims = true});
  for (const auto& st : silent.stages)
    EXPECT_TRUE(st.on_host()) << "an unknown name splits nothing";
}

// The pick among candidates of different distributions: the first in dependency order.
TEST_F(staged_compute, the_stage_pick_is_the_first_candidate_s_distribution) {
  schema s{"pick"};
  s.field("data");
  const auto copy = [](const record& r) { return r.get("data"); };
  s.property({.name = "x", .field_deps = {"data"}, .compute = copy});
  s.property(
    {.name = "y", .field_deps = {"data"}, .required_dims = dim_filter::all(), .compute = copy});
  s.property({.name = "z", .field_deps = {"data"}, .property_deps = {"x", "y"}, .compute = copy});
  record r{std::make_shared<const schema>(std::move(s)), {{"data", data_123()}}};
  EXPECT_EQ(stages_of(plan_compute(r, {"z"})),
            (std::vector<std::vector<std::string>>{{"x"}, {"y"}, {"z"}}));
}

TEST_F(staged_compute, a_slice_that_throws_fails_the_call_with_its_exception) {
  schema s{"throws"};
  s.field("data").property(
    {.name = "bad", .field_deps = {"data"}, .compute = [](const record& r) -> tensor {
       if (r.get("data").values()() == 2.0)
         throw std::out_of_range("slice 1 refuses");
       return r.get("data");
     }});
  record r{std::make_shared<const schema>(std::move(s)), {{"data", data_123()}}};
  EXPECT_THROW(parallel_compute(r, {"bad"}, {}, pool), std::out_of_range);
  EXPECT_FALSE(r.is_cached("bad"));
}

TEST_F(staged_compute, a_declared_out_that_does_not_match_is_refused) {
  schema s{"out"};
  s.field("data").property({.name = "p",
                            .field_deps = {"data"},
                            .out = shape{batch("other", 3)},
                            .compute = [](const record& r) { return r.get("data"); }});
  record r{std::make_shared<const schema>(std::move(s)), {{"data", data_123()}}};
  EXPECT_THROW(parallel_compute(r, {"p"}, {}, pool), troupe::invalid_argument);
}

TEST(staged_tensor, slices_and_stacks_by_name) {
  const tensor t = example_by_time();
  EXPECT_EQ(t.slice({{"time", 2}}).values(), (xt::xarray<double>{2, 12}));
  EXPECT_EQ(t.slice({{"time", 2}}).dims(), (shape{batch("example", 2)}));
  EXPECT_EQ(t.slice({{"other", 0}}).values(), t.values()) << "a dim it lacks is not sliced";
  std::vector<tensor> parts{t.slice({{"time", 0}}), t.slice({{"time", 1}}), t.slice({{"time", 2}})};
  const auto back = tensor::stack(parts, shape{batch("time", 3)});
  EXPECT_EQ(back.dims(), (shape{batch("time", 3), batch("example", 2)}));
  EXPECT_EQ(back.values(), xt::transpose(t.values()));
  EXPECT_THROW(t.slice({{"time", 3}}), troupe::invalid_argument);
  EXPECT_THROW(tensor(xt::xarray<double>{1, 2}, {batch("data", 3)}), troupe::invalid_argument);
  EXPECT_THROW((shape{batch("a", 1), spatial("a", 2)}), troupe::invalid_argument);
}

} // namespace
} // namespace troupe::staged
