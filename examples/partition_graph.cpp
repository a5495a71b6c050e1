// A heat stencil split across the ranks of a world: each rank owns a few cells of a periodic 1-D
// rod and builds the DAG of 6 time steps for them, receiving its neighbours' edge cells each
// step and sending its own; find_distributed_partition cuts each rank's DAG into the parts
// between the exchanges, and execute_distributed_partition runs them. Start it twice:
//
//   TROUPE_RANK=0 TROUPE_WORLD_SIZE=2 build/examples/partition_graph [DIR] &
//   TROUPE_RANK=1 TROUPE_WORLD_SIZE=2 build/examples/partition_graph [DIR]
//
// (or under mpirun -np 2). Each rank checks its cells against the whole rod computed on its
// own, and, given DIR, writes DIR/partition_<rank>.dot (dot -Tsvg to look at it).
#include <troupe/collectives/collective_group.hpp>
#include <troupe/troupe.hpp>

#include <troupe/graph/distributed.hpp>
#include <troupe/graph/dot.hpp>

#include <fstream>
#include <iostream>

using namespace troupe::graph;

namespace {

constexpr int cells_per_rank = 3, steps = 6;

/// One step of the stencil for a row of cells with its two halo cells.
std::vector<node_ptr> step(const std::vector<node_ptr>& row, const node_ptr& left,
                           const node_ptr& right) {
  std::vector<node_ptr> next;
  for (std::size_t i = 0; i < row.size(); ++i) {
    const auto& l = i == 0 ? left : row[i - 1];
    const auto& r = i + 1 == row.size() ? right : row[i + 1];
    next.push_back(row[i] + 0.2 * (l - 2.0 * row[i] + r));
  }
  return next;
}

node_ptr cell_input(int cell) { return placeholder("u" + std::to_string(cell), {8}); }

tensor_map initial(int cells) {
  tensor_map u;
  for (int c = 0; c < cells; ++c)
    u["u" + std::to_string(c)] = xt::ones<double>({8}) * (c == 0 ? 100.0 : 0.0);
  return u;
}

} // namespace

int main(int argc, char** argv) {
  troupe::runtime rt;
  troupe::world world{rt, troupe::world_options::from_environment()};
  const int rank = world.rank(), size = world.size();
  std::vector<int> everyone(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r)
    everyone[static_cast<std::size_t>(r)] = r;
  // snippet-begin: distributed
  auto group = troupe::create_collective_group(world, everyone);

  // This rank's cells; each step it sends its first cell left and its last right, and receives
  // the halo from each neighbour.
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  std::vector<node_ptr> row;
  for (int i = 0; i < cells_per_rank; ++i)
    row.push_back(cell_input(rank * cells_per_rank + i));
  for (int t = 0; t < steps; ++t) {
    const auto tag = std::to_string(t);
    auto from_left = make_distributed_recv(left, "to-right-" + tag, {8});
    auto from_right = make_distributed_recv(right, "to-left-" + tag, {8});
    auto halo_left = staple_distributed_send(row.front(), left, "to-left-" + tag, from_left);
    auto halo_right = staple_distributed_send(row.back(), right, "to-right-" + tag, from_right);
    row = step(row, halo_left, halo_right);
  }
  std::map<std::string, node_ptr> named;
  for (int i = 0; i < cells_per_rank; ++i)
    named["cell" + std::to_string(rank * cells_per_rank + i)] = row[static_cast<std::size_t>(i)];

  const auto partition = find_distributed_partition(*group, make_outputs(named));
  verify_distributed_partition(*group, partition);
  tensor_map mine;
  for (int i = 0; i < cells_per_rank; ++i) {
    const auto name = "u" + std::to_string(rank * cells_per_rank + i);
    mine[name] = initial(size * cells_per_rank).at(name);
  }
  const auto values = execute_distributed_partition(partition, *group, mine);
  // snippet-end: distributed

  // The whole rod on this rank alone, for comparison.
  std::vector<node_ptr> rod;
  for (int c = 0; c < size * cells_per_rank; ++c)
    rod.push_back(cell_input(c));
  for (int t = 0; t < steps; ++t)
    rod = step(rod, rod.back(), rod.front());
  std::map<std::string, node_ptr> all;
  for (std::size_t c = 0; c < rod.size(); ++c)
    all["cell" + std::to_string(c)] = rod[c];
  const auto reference = evaluate(make_outputs(all), initial(size * cells_per_rank));
  double worst = 0;
  for (const auto& [name, value] : values)
    worst = std::max(worst, xt::amax(xt::abs(value - reference.at(name)))());
  std::cout << "rank " << rank << ": " << partition.parts.size() << " parts; cells differ from "
            << "the whole rod by " << worst << "\n";
  if (argc > 1)
    std::ofstream{std::string{argv[1]} + "/partition_" + std::to_string(rank) + ".dot"}
      << get_dot_graph(partition);
  return worst < 1e-9 ? 0 : 1;
}
