// staged/'s MIXED properties (other_seeds.md §1c 17): an expression split into an operation
// each, element-wise ones and local reductions on the slices, a reduction over the split dims on
// the host.
#include "troupe/pools/thread_pool.hpp"
#include "troupe/staged/parallel_compute.hpp"

#include "plan_support.hpp"

#include <gtest/gtest.h>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>

namespace troupe::staged {
namespace {

/// data(example=2, x=3, y=2) = 0 .. 11.
tensor example_x_y() {
  xt::xarray<double> v = xt::arange<double>(12);
  v.reshape({2, 3, 2});
  return {v, {batch("example", 2), spatial("x", 3), spatial("y", 2)}};
}

std::shared_ptr<const schema> mixed_schema(bool persistent = false) {
  schema s{"mixed"};
  s.field("data");
  s.property({.name = "total",
              .persistent = persistent,
              .mixed = sum(expr::field("data") * 2.0, {"example", "x", "y"})});
  s.property({.name = "local_mean", .mixed = mean(expr::field("data"), {"x"})});
  s.property({.name = "centred",
              .mixed = expr::field("data") - mean(expr::field("data"), {"example", "x", "y"})});
  s.property({.name = "scaled", .mixed = expr::property("total") * 0.5});
  s.property({.name = "plain", .mixed = expr::field("data")});
  return std::make_shared<const schema>(std::move(s));
}

class staged_mixed : public ::testing::Test {
protected:
  runtime rt;
  thread_pool pool{rt, {.workers = 2}};
};

// §1c 17: mul on the slices, the sum over x, y on the slices, the sum over example on the host.
TEST_F(staged_mixed, a_sum_over_split_and_local_dims_is_cut_in_two) {
  record r{mixed_schema(), {{"data", example_x_y()}}};
  const auto plan = parallel_compute(r, {"total"}, {}, pool);
  EXPECT_EQ(stages_of(plan),
            (std::vector<std::vector<std::string>>{{"total_0_mul", "total_1_sum"}, {"total"}}));
  EXPECT_EQ(plan.stages[0].distributed, (shape{batch("example", 2)}));
  EXPECT_TRUE(plan.stages[1].on_host());
  ASSERT_EQ(plan.operations.size(), 3u);
  EXPECT_EQ(plan.operations.at("total_0_mul").op, "mul");
  EXPECT_EQ(plan.operations.at("total_1_sum").dims, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(plan.operations.at("total").dims, (std::vector<std::string>{"example"}));
  EXPECT_EQ(plan.stages[0].returned, (std::vector<std::string>{"total_1_sum"}))
    << "the product never leaves its slice";
  EXPECT_EQ(r.get("total").values()(), 2.0 * 66);
  EXPECT_EQ(r.cached(), (std::vector<std::string>{"total"}));
}

TEST_F(staged_mixed, the_split_computes_what_the_whole_expression_computes) {
  record split{mixed_schema(), {{"data", example_x_y()}}};
  parallel_compute(split, {"local_mean", "centred", "scaled", "plain"}, {}, pool);
  record whole{mixed_schema(), {{"data", example_x_y()}}};
  const auto here =
    parallel_compute(whole, {"local_mean", "centred", "scaled", "plain"}, {.max_workers = 0}, pool);
  EXPECT_EQ(here.workers, 0u);
  for (const auto* name : {"local_mean", "centred", "scaled", "plain"}) {
    EXPECT_TRUE(split.get(name).dims().equivalent(whole.get(name).dims())) << name;
    EXPECT_TRUE(xt::allclose(split.get(name).values(), whole.get(name).values())) << name;
  }
  EXPECT_TRUE(xt::allclose(split.get("centred").values(), example_x_y().values() - 5.5));
  EXPECT_EQ(split.get("scaled").values()(), 66.0);
}

TEST_F(staged_mixed, a_reduction_over_local_dims_only_is_one_operation_on_the_slices) {
  record r{mixed_schema(), {{"data", example_x_y()}}};
  const auto plan = parallel_compute(r, {"local_mean"}, {}, pool);
  EXPECT_EQ(stages_of(plan), (std::vector<std::vector<std::string>>{{"local_mean"}}));
  EXPECT_FALSE(plan.stages[0].on_host());
  EXPECT_TRUE(r.get("local_mean").dims().equivalent(shape{batch("example", 2), spatial("y", 2)}));
}

TEST_F(staged_mixed, an_expression_without_operations_runs_whole) {
  record r{mixed_schema(), {{"data", example_x_y()}}};
  const auto plan = parallel_compute(r, {"plain"}, {}, pool);
  EXPECT_TRUE(plan.operations.empty());
  EXPECT_EQ(r.get("plain").values(), example_x_y().values());
}

TEST_F(staged_mixed, only_the_last_operation_is_persistent) {
  record r{mixed_schema(true), {{"data", example_x_y()}}};
  parallel_compute(r, {"scaled"}, {}, pool);
  EXPECT_EQ(r.cached(), (std::vector<std::string>{"scaled", "total"}));
}

TEST(staged_mixed_schema, a_property_is_compute_or_mixed_not_both) {
  schema s{"both"};
  s.field("data");
  EXPECT_THROW(s.property({.name = "p",
                           .compute = [](const record& r) { return r.get("data"); },
                           .mixed = expr::field("data")}),
               troupe::invalid_argument);
  EXPECT_THROW(s.property({.name = "q"}), troupe::invalid_argument);
  EXPECT_THROW(sum(expr::field("data"), {}), troupe::invalid_argument);
}

} // namespace
} // namespace troupe::staged
