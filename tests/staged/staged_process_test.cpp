// staged/: slices on worker processes, which find the schema by name. This binary is also the
// pool's worker program (see main).
#include "troupe/pools/process_pool.hpp"
#include "troupe/staged/disk_cache.hpp"
#include "troupe/staged/errors.hpp"
#include "troupe/staged/parallel_compute.hpp"

#include <gtest/gtest.h>

#include <xtensor/xmath.hpp>

#include <csignal>
#include <filesystem>
#include <unistd.h>

/// What a tensor sums to, in whichever process runs it.
TROUPE_TASK(staged_test_sum, [](troupe::staged::tensor t) { return xt::sum(t.values())(); });

namespace troupe::staged {
namespace {

tensor twice(const tensor& t) { return {2.0 * t.values(), t.dims()}; }

/// Registered at namespace scope: the workers run this program, so they have it too. `pid` is
/// the worker's process id (a value per slice); `crash` kills the worker of slice 1.
const auto worker_schema = register_schema(
  schema{"staged_process_test"}
    .field("value")
    .property({.name = "result",
               .field_deps = {"value"},
               .compute = [](const record& r) { return twice(r.get("value")); }})
    .property(
      {.name = "total",
       .property_deps = {"result"},
       .required_dims = dim_filter::all(),
       .compute =
         [](const record& r) { return tensor::scalar(xt::sum(r.get("result").values())()); }})
    .property(
      {.name = "pid",
       .compute = [](const record&) { return tensor::scalar(static_cast<double>(::getpid())); }})
    .property({.name = "crash",
               .field_deps = {"value"},
               .compute = [](const record& r) -> tensor {
                 if (r.get("value").values()() == 10.0)
                   ::raise(SIGKILL);
                 return r.get("value");
               }})
    .property(
      {.name = "refuses",
       .field_deps = {"value"},
       .compute = [](const record&) -> tensor { throw std::out_of_range("refused on a worker"); }})
    .property(
      {.name = "mixed_total", .mixed = sum(expr::field("value") * 2.0, {"example", "time"})})
    .property({.name = "over_time", // needs time whole: split along example only
               .field_deps = {"value"},
               .required_dims = dim_filter::names({"time"}),
               .compute =
                 [](const record& r) {
                   const auto& v = r.get("value");
                   return tensor{xt::sum(v.values(), {v.dims().index_of("time")}),
                                 v.dims().without(dim_filter::names({"time"}))};
                 }})
    .property({.name = "sneaky", // reads a field it does not declare
               .compute = [](const record& r) { return r.get("value"); }}));

/// PhiML's own test: p1 = value + 1, p1_mean over everything, rel_p1 = p1 - p1_mean.
const auto phiml_schema = register_schema(
  schema{"staged_process_phiml"}
    .field("value")
    .property({.name = "p1",
               .field_deps = {"value"},
               .compute =
                 [](const record& r) {
                   return tensor{r.get("value").values() + 1.0, r.get("value").dims()};
                 }})
    .property(
      {.name = "p1_mean",
       .property_deps = {"p1"},
       .required_dims = dim_filter::all(),
       .compute = [](const record& r) { return tensor::scalar(xt::mean(r.get("p1").values())()); }})
    .property(
      {.name = "rel_p1", .property_deps = {"p1", "p1_mean"}, .compute = [](const record& r) {
         const auto& p1 = r.get("p1");
         return tensor{p1.values() - r.get("p1_mean").values()(), p1.dims()};
       }}));

tensor example_by_time() {
  return {xt::xarray<double>{{0, 1, 2}, {10, 11, 12}}, {batch("example", 2), batch("time", 3)}};
}

class staged_processes : public ::testing::Test {
protected:
  runtime rt;
  process_pool pool{rt, {.workers = 2}};
};

TEST_F(staged_processes, slices_run_on_workers_and_stack_back) {
  record r{worker_schema, {{"value", example_by_time()}}};
  const auto plan = parallel_compute(r, {"total", "pid"}, {}, pool);
  EXPECT_EQ(plan.workers, 2u);
  EXPECT_EQ(r.get("total").values()(), 2.0 * 36);
  EXPECT_EQ(r.cached(), (std::vector<std::string>{"pid", "total"}));
  const auto& pids = r.get("pid");
  EXPECT_EQ(pids.dims(), (shape{batch("example", 2), batch("time", 3)}));
  for (double pid : pids.values())
    EXPECT_NE(pid, static_cast<double>(::getpid())) << "each slice ran in a worker";
}

// §1c 5, PhiML's own test, on worker processes with a real disk cache: workers, the host,
// workers again, rel_p1 left on disk by a one-byte limit.
TEST_F(staged_processes, phimls_own_test_with_a_disk_cache) {
  if (!troupe::staged::disk_cache_available())
    GTEST_SKIP() << "this build has no disk cache (TROUPE_WITH_HDF5 off)";
  std::string pattern = (std::filesystem::temp_directory_path() / "troupe-staged-XXXXXX").string();
  const std::filesystem::path folder = ::mkdtemp(pattern.data());
  {
    record r{phiml_schema, {{"value", tensor{xt::xarray<double>{0, 1}, {batch("example", 2)}}}}};
    const auto plan = parallel_compute(
      r, {"rel_p1"}, {.max_workers = 1, .memory_limit = 1, .cache_dir = folder}, pool);
    ASSERT_EQ(plan.stages.size(), 3u);
    EXPECT_TRUE(plan.stages[1].on_host());
    const auto& rel = r.get("rel_p1");
    EXPECT_FALSE(rel.available());
    EXPECT_TRUE(xt::allclose(rel.values(), xt::xarray<double>{-0.5, 0.5}));
    EXPECT_EQ(r.cached(), (std::vector<std::string>{"rel_p1"}));
  }
  std::filesystem::remove_all(folder);
}

// §1c 2, 4 and 6 on worker processes: a chain of one distribution is one stage whose
// intermediate never comes back; a host stage's scalar goes to every slice after it; what no
// later stage reads is dropped.
TEST_F(staged_processes, phimls_stages_on_worker_processes) {
  record r{phiml_schema, {{"value", tensor{xt::xarray<double>{0, 1}, {batch("example", 2)}}}}};
  const auto plan = parallel_compute(r, {"rel_p1"}, {}, pool);
  ASSERT_EQ(plan.stages.size(), 3u);
  EXPECT_EQ(plan.stages[2].inputs, (std::vector<std::string>{"p1", "p1_mean"}));
  EXPECT_EQ(r.get("rel_p1").values(), (xt::xarray<double>{-0.5, 0.5}));
  EXPECT_EQ(r.cached(), (std::vector<std::string>{"rel_p1"}));

  record kept{worker_schema, {{"value", example_by_time()}}};
  const auto fused = parallel_compute(kept, {"total"}, {.keep_intermediate = true}, pool);
  EXPECT_EQ(fused.stages[0].properties, (std::vector<std::string>{"result"}));
  EXPECT_EQ(kept.cached(), (std::vector<std::string>{"result", "total"}));
}

// §1c 9 and 11 on worker processes: max_workers = 0 runs here; a property needing a parallel
// dim whole is split along the others.
TEST_F(staged_processes, no_workers_and_a_required_parallel_dim) {
  record here{worker_schema, {{"value", example_by_time()}}};
  EXPECT_EQ(parallel_compute(here, {"pid"}, {.max_workers = 0}, pool).workers, 0u);
  EXPECT_EQ(here.get("pid").values()(), static_cast<double>(::getpid()));

  record r{worker_schema, {{"value", example_by_time()}}};
  const auto plan = parallel_compute(r, {"over_time"}, {}, pool);
  EXPECT_EQ(plan.stages[0].distributed, (shape{batch("example", 2)}));
  EXPECT_EQ(r.get("over_time").values(), (xt::xarray<double>{3, 33}));
}

// §1c 12 on worker processes: a field the stage does not declare is not there.
TEST_F(staged_processes, an_undeclared_field_is_not_sent) {
  record r{worker_schema, {{"value", example_by_time()}}};
  try {
    parallel_compute(r, {"sneaky"}, {}, pool);
    FAIL() << "an undeclared field reached a worker";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("field 'value'"), std::string::npos) << e.what();
    EXPECT_NE(std::string{e.what()}.find("field_deps of property 'sneaky'"), std::string::npos)
      << e.what();
  }
}

// §1c 16: workers write what does not fit to files; the results travel as references, and
// read back here and in another worker.
TEST_F(staged_processes, results_on_disk_are_read_back_in_any_process) {
  if (!troupe::staged::disk_cache_available())
    GTEST_SKIP() << "this build has no disk cache (TROUPE_WITH_HDF5 off)";
  std::string pattern = (std::filesystem::temp_directory_path() / "troupe-staged-XXXXXX").string();
  const std::filesystem::path folder = ::mkdtemp(pattern.data());
  {
    record r{worker_schema, {{"value", example_by_time()}}};
    parallel_compute(r, {"result"}, {.memory_limit = 1, .cache_dir = folder}, pool);
    const auto& result = r.get("result");
    EXPECT_FALSE(result.available());
    EXPECT_EQ(get_cache_files(r).size(), 6u) << "a file a slice";
    EXPECT_EQ(result.values(), 2.0 * example_by_time().values());
    EXPECT_EQ(pool.apply(staged_test_sum, result), 2.0 * 36);
  }
  std::filesystem::remove_all(folder);
}

// §1c 17 on worker processes: the operations travel with the slices.
TEST_F(staged_processes, a_mixed_property_splits_across_workers_and_the_host) {
  record r{worker_schema, {{"value", example_by_time()}}};
  const auto plan =
    parallel_compute(r, {"mixed_total"}, {.parallel_dims = dim_filter::names({"example"})}, pool);
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_EQ(plan.stages[0].properties,
            (std::vector<std::string>{"mixed_total_0_mul", "mixed_total_1_sum"}));
  EXPECT_TRUE(plan.stages[1].on_host());
  EXPECT_EQ(r.get("mixed_total").values()(), 2.0 * 36);
}

// §1c 19: a worker that dies fails the call with worker_lost, and the call returns.
TEST_F(staged_processes, a_worker_that_dies_is_worker_lost) {
  record r{worker_schema, {{"value", example_by_time()}}};
  EXPECT_THROW(parallel_compute(r, {"crash"}, {}, pool), troupe::worker_lost);
  EXPECT_FALSE(r.is_cached("crash"));
  parallel_compute(r, {"result"}, {}, pool); // the pool goes on
  EXPECT_EQ(r.get("result").values(), 2.0 * example_by_time().values());
}

TEST_F(staged_processes, an_exception_on_a_worker_comes_back_as_its_type) {
  record r{worker_schema, {{"value", example_by_time()}}};
  EXPECT_THROW(parallel_compute(r, {"refuses"}, {}, pool), std::out_of_range);
}

TEST_F(staged_processes, a_schema_the_workers_do_not_know_is_refused_by_name) {
  schema s{"unregistered"};
  s.field("value").property({.name = "p", .field_deps = {"value"}, .compute = [](const record& q) {
                               return q.get("value");
                             }});
  record r{std::make_shared<const schema>(std::move(s)), {{"value", example_by_time()}}};
  try {
    parallel_compute(r, {"p"}, {}, pool);
    FAIL() << "an unregistered schema ran on a worker";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("'unregistered'"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace troupe::staged

#include "../worker_program_main.hpp" // this binary is also the pool's worker program
