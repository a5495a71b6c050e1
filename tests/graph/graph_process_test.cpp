// graph/: a partition's parts on worker processes. This binary is also the pool's worker
// program (see main).
#include "troupe/graph/analysis.hpp"
#include "troupe/graph/pool_partition.hpp"
#include "troupe/pools/process_pool.hpp"

#include <gtest/gtest.h>

namespace troupe::graph {
namespace {

/// 8 independent outputs over one input, each its own part, and one more that needs them all.
node_ptr fan_out_and_in(std::map<const node*, part_id>& part) {
  auto x = placeholder("x", {16});
  std::map<std::string, node_ptr> named;
  node_ptr total = nullptr;
  for (int i = 0; i < 8; ++i) {
    auto y = elementwise("sqrt", {elementwise("abs", {x * (1.0 + i)})});
    for (const auto& n : topological_order(y))
      part.emplace(n.get(), i);
    named["y" + std::to_string(i)] = y;
    total = total ? total + y : y;
  }
  for (const auto& n : topological_order(total))
    part.emplace(n.get(), 8);
  named["total"] = total;
  return make_outputs(named);
}

TEST(graph_process_pool, parts_run_on_workers_as_on_this_thread) {
  troupe::runtime rt;
  troupe::process_pool pool{rt, {.workers = 2}};
  std::map<const node*, part_id> part;
  const auto dag = fan_out_and_in(part);
  const auto p = find_partition(dag, [&](const node_ptr& n) { return part.at(n.get()); });
  ASSERT_EQ(p.parts.size(), 9u);
  const tensor_map inputs{{"x", xt::linspace<double>(-4.0, 4.0, 16)}};
  const auto here = execute_partition(p, inputs);
  const auto there = execute_partition(p, inputs, pool);
  for (const auto& [name, value] : here)
    EXPECT_TRUE(xt::allclose(there.at(name), value)) << name;
}

TEST(graph_process_pool, a_part_that_fails_there_fails_here_as_itself) {
  troupe::runtime rt;
  troupe::process_pool pool{rt, {.workers = 2}};
  auto x = placeholder("x", {2});
  auto out = make_outputs({{"a", x + 1.0}, {"b", x * 2.0}});
  const auto p =
    find_partition(out, [](const node_ptr& n) -> part_id { return n->name() == "add"; });
  EXPECT_THROW(execute_partition(p, {}, pool), troupe::invalid_argument) << "no input x";
}

} // namespace
} // namespace troupe::graph

#include "../worker_program_main.hpp" // this binary is also the pool's worker program
