// Cutting an array computation into parts and running them on a thread pool: a 1-D heat
// stencil over 8 time steps, split into 4 parts of 2 steps each, then drawn with Graphviz.
//
//   build/examples/partition_graph [partition.dot]      # then: dot -Tsvg partition.dot
#include <troupe/troupe.hpp>

#include <troupe/graph/analysis.hpp>
#include <troupe/graph/dot.hpp>
#include <troupe/graph/partition.hpp>

#include <fstream>
#include <iostream>

using namespace troupe::graph;

int main(int argc, char** argv) {
  const std::string dot_path = argc > 1 ? argv[1] : "partition.dot";
  constexpr int cells = 6, steps = 8;

  // u[t+1][i] = u[t][i] + 0.1 * (u[t][i-1] - 2 u[t][i] + u[t][i+1]), periodic; each cell a
  // vector of 1,000 samples. Remember which step made each node: that is its part.
  std::vector<node_ptr> u;
  for (int i = 0; i < cells; ++i)
    u.push_back(placeholder("u" + std::to_string(i), {1000}));
  std::map<const node*, part_id> step_of;
  for (int t = 0; t < steps; ++t) {
    std::vector<node_ptr> next;
    for (int i = 0; i < cells; ++i) {
      const auto& left = u[(i + cells - 1) % cells];
      const auto& right = u[(i + 1) % cells];
      next.push_back(u[i] + 0.1 * (left - 2.0 * u[i] + right));
    }
    for (const auto& n : next)
      for (const auto& made : topological_order(n))
        step_of.emplace(made.get(), t / 2); // the first step that made a node claims it
    u = std::move(next);
  }
  std::map<std::string, node_ptr> named;
  for (int i = 0; i < cells; ++i)
    named["u" + std::to_string(i) + "_final"] = u[static_cast<std::size_t>(i)];
  const auto outputs = make_outputs(named);

  const auto partition =
    find_partition(outputs, [&](const node_ptr& n) { return step_of.at(n.get()); });
  std::cout << partition.parts.size() << " parts, in order:";
  for (auto pid : partition.toposorted_part_ids)
    std::cout << " " << pid;
  std::cout << "\n";

  tensor_map inputs;
  for (int i = 0; i < cells; ++i)
    inputs["u" + std::to_string(i)] = xt::ones<double>({1000}) * (i == 0 ? 100.0 : 0.0);
  troupe::runtime rt;
  troupe::thread_pool pool{rt, {.workers = 2}};
  const auto on_pool = execute_partition(partition, inputs, pool);
  const auto reference = evaluate(outputs, inputs);
  double worst = 0;
  for (const auto& [name, value] : reference)
    worst = std::max(worst, xt::amax(xt::abs(on_pool.at(name) - value))());
  std::cout << "heat in cell 0 after " << steps << " steps: " << on_pool.at("u0_final")(0)
            << "; parts against the whole graph differ by " << worst << "\n";

  std::ofstream{dot_path} << get_dot_graph(partition);
  std::cout << "wrote " << dot_path << "\n";
  return worst < 1e-9 ? 0 : 1;
}
