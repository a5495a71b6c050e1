// bench/graph: graph/'s passes over random DAGs of 10^4, 10^5 and 10^6 nodes, and a partition of
// independent parts run on this thread against a 2-worker thread pool, in one run.
//
//   build/bench/graph [rounds]
//
// find_distributed_partition runs on 2 ranks of a world on 127.0.0.1 (this process is rank 0
// and starts rank 1 as itself again): each rank's random DAG exchanges the node every 1,000th
// position with the other rank, the value received added in, so later exchanges wait on
// earlier ones (a part per exchange, as in a time-stepped stencil).
//
// The DAGs: each node adds or subtracts one of the 8 nodes before it and one of the 2,000 before
// it, over 3 placeholders (a DAG with locality, as stencils and networks have; with edges to
// anywhere, nearly every edge crosses parts and the count of cuts, not of nodes, is measured);
// outputs are the last 3 nodes. Parts are consecutive blocks of 1,000 nodes in topological order.
// Medians over the rounds. The last lines are `name value unit`, read by tooling; the parts'
// speedup on two plain threads, in the same rounds, is what this machine's two cores allow.
#include "median.hpp"

#include "troupe/actors/network.hpp"
#include "troupe/collectives/collective_group.hpp"
#include "troupe/graph/analysis.hpp"
#include "troupe/graph/distributed.hpp"
#include "troupe/graph/evaluate.hpp"
#include "troupe/graph/partition.hpp"
#include "troupe/graph/pool_partition.hpp"
#include "troupe/pools/thread_pool.hpp"
#include "troupe/world/world.hpp"

#include "../tests/queues/process_support.hpp" // wait_for: a peer waited for with a deadline
#include "spawn_self.hpp"

#include <sys/wait.h>

#include <xtensor/xmath.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <thread>

namespace {

using namespace troupe::graph;
using clock_type = std::chrono::steady_clock;

double since_s(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

using troupe::bench::median;

/// The random DAG; with `exchange_with` set, the node at every 1,000th position (plus the last
/// exchange's result) is sent to that rank and replaced by itself plus what that rank sends
/// under the same tag.
node_ptr random_dag(unsigned seed, int size, std::optional<int> exchange_with = std::nullopt) {
  std::mt19937 random{seed};
  std::vector<node_ptr> nodes{placeholder("a", {4}), placeholder("b", {4}), placeholder("c", {4})};
  node_ptr exchanged; // the last exchange: every exchange feeds the next, and the outputs
  for (int i = 0; i < size; ++i) {
    std::uniform_int_distribution<std::size_t> recent{1, std::min<std::size_t>(8, nodes.size())};
    std::uniform_int_distribution<std::size_t> window{1, std::min<std::size_t>(2000, nodes.size())};
    const auto l = nodes[nodes.size() - recent(random)];
    const auto r = nodes[nodes.size() - window(random)];
    nodes.push_back(random() % 2 ? l + r : l - r);
    if (exchange_with && i % 1000 == 999) {
      const auto tag = std::to_string(i);
      const auto mine = exchanged ? nodes.back() + exchanged : nodes.back();
      exchanged = staple_distributed_send(mine, *exchange_with, tag,
                                          mine + make_distributed_recv(*exchange_with, tag, {4}));
      nodes.back() = exchanged;
    }
  }
  std::map<std::string, node_ptr> outputs{{"o0", nodes[nodes.size() - 1]},
                                          {"o1", nodes[nodes.size() - 2]},
                                          {"o2", nodes[nodes.size() - 3]}};
  if (exchanged)
    outputs["exchanged"] = exchanged;
  return make_outputs(outputs);
}

struct pass_times {
  std::vector<double> topo, users, partition;
};

pass_times time_passes(const node_ptr& dag, int rounds) {
  pass_times t;
  for (int round = 0; round < rounds; ++round) {
    auto start = clock_type::now();
    const auto order = topological_order(dag);
    t.topo.push_back(since_s(start));
    start = clock_type::now();
    const auto users = get_users(dag);
    t.users.push_back(since_s(start));
    std::unordered_map<const node*, part_id> position;
    part_id i = 0;
    for (const auto& n : order)
      position[n.get()] = i++ / 1000;
    start = clock_type::now();
    const auto p = find_partition(dag, [&](const node_ptr& n) { return position.at(n.get()); });
    t.partition.push_back(since_s(start));
    if (p.parts.empty() || users.empty())
      std::abort();
  }
  return t;
}

/// 16 outputs of element-wise work on one input, each its own part.
graph_partition independent_parts(std::size_t elements) {
  auto x = placeholder("x", {static_cast<std::int64_t>(elements)});
  std::map<std::string, node_ptr> named;
  std::unordered_map<const node*, part_id> part;
  for (int i = 0; i < 16; ++i) {
    node_ptr y = x * (1.0 + i);
    for (int k = 0; k < 32; ++k)
      y = elementwise("sqrt", {elementwise("abs", {elementwise("exp", {y * 0.001})})});
    y = reduce(y, {0});
    for (const auto& n : topological_order(y))
      part.emplace(n.get(), i);
    named["o" + std::to_string(i)] = y;
  }
  return find_partition(make_outputs(named), [&](const node_ptr& n) { return part.at(n.get()); });
}

/// Part `pid` alone: its outputs by name, what a worker evaluates.
node_ptr outputs_of(const graph_partition& p, part_id pid) {
  std::map<std::string, node_ptr> named;
  for (const auto& name : p.parts.at(pid).output_names)
    named.emplace(name, p.var_name_to_result.at(name));
  return make_outputs(named);
}

/// The parts split between two plain threads, no pool: what this machine's two cores give.
void run_on_two_threads(const graph_partition& p, const tensor_map& inputs) {
  const auto half = [&](part_id first) {
    for (part_id pid = first; pid < static_cast<part_id>(p.parts.size()); pid += 2)
      (void)evaluate(outputs_of(p, pid), inputs);
  };
  std::thread other{half, 1};
  half(0);
  other.join();
}

struct parts_times {
  double here, pool, threads;
};

/// Seconds for the parts on this thread, on a 2-worker pool and on two plain threads,
/// interleaved, medians.
parts_times time_parts(const graph_partition& p, const tensor_map& inputs, int rounds) {
  troupe::runtime rt;
  troupe::thread_pool pool{rt, {.workers = 2}};
  (void)execute_partition(p, inputs, pool); // warm: threads started, pages touched
  std::vector<double> here, there, threads;
  for (int round = 0; round < rounds; ++round) {
    auto start = clock_type::now();
    (void)execute_partition(p, inputs);
    here.push_back(since_s(start));
    start = clock_type::now();
    (void)execute_partition(p, inputs, pool);
    there.push_back(since_s(start));
    start = clock_type::now();
    run_on_two_threads(p, inputs);
    threads.push_back(since_s(start));
  }
  return {median(here), median(there), median(threads)};
}

constexpr std::array<int, 3> sizes{10'000, 100'000, 1'000'000};

/// find_distributed_partition's seconds at each size, medians; every rank runs it.
std::map<int, double> time_distributed(troupe::collective_group& group, int rounds) {
  std::map<int, double> seconds;
  for (int size : sizes) {
    const auto dag = random_dag(static_cast<unsigned>(group.rank() + 1), size, 1 - group.rank());
    std::vector<double> times;
    for (int round = 0; round < rounds; ++round) {
      group.barrier(); // both ranks start together: the pass is collective
      const auto start = clock_type::now();
      const auto p = find_distributed_partition(group, dag);
      times.push_back(since_s(start));
      if (p.parts.empty())
        std::abort();
    }
    seconds[size] = median(times);
  }
  return seconds;
}

troupe::world_options rank_options(int rank, int port) {
  troupe::world_options options;
  options.name = "rank-" + std::to_string(rank);
  options.rank = rank;
  options.world_size = 2;
  options.address = "127.0.0.1:" + std::to_string(port);
  options.timeout = std::chrono::seconds{120};
  return options;
}

std::map<int, double> distributed_rank(int rank, int port, int rounds) {
  troupe::runtime rt;
  troupe::world world{rt, rank_options(rank, port)};
  auto group =
    troupe::create_collective_group(world, {0, 1}, {.timeout = std::chrono::seconds{120}});
  return time_distributed(*group, rounds);
}

/// Rank 0's figures, rank 1 started as this program again.
std::map<int, double> time_distributed_on_two_ranks(int rounds) {
  const int port = troupe::detail::free_loopback_port();
  const pid_t other = troupe::bench::spawn_self("TROUPE_GRAPH_BENCH_RANK1=" + std::to_string(port) +
                                                ":" + std::to_string(rounds));
  auto seconds = distributed_rank(0, port, rounds);
  (void)troupe::testing::wait_for(other, std::chrono::seconds{60});
  return seconds;
}

} // namespace

int main(int argc, char** argv) {
  if (const char* role = std::getenv("TROUPE_GRAPH_BENCH_RANK1")) {
    int port = 0, rounds = 0;
    if (std::sscanf(role, "%d:%d", &port, &rounds) != 2)
      return 2;
    (void)distributed_rank(1, port, rounds);
    return 0;
  }
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  std::printf("graph: random DAGs, %d rounds, medians\n", rounds);
  std::printf("%-10s %14s %14s %16s\n", "nodes", "topo_sort s", "users s", "find_partition s");
  std::map<int, double> partition_s;
  for (int size : sizes) {
    const auto dag = random_dag(1, size);
    const auto t = time_passes(dag, rounds);
    partition_s[size] = median(t.partition);
    std::printf("%-10d %14.4f %14.4f %16.4f\n", size, median(t.topo), median(t.users),
                partition_s[size]);
  }
  const auto distributed_s = time_distributed_on_two_ranks(rounds);
  std::printf("%-10s %31s\n", "nodes", "find_distributed_partition s (2 ranks, rank 0)");
  for (int size : sizes)
    std::printf("%-10d %31.4f\n", size, distributed_s.at(size));
  const std::size_t elements = 3072; // about 1 ms a part here, as the issue asks
  const auto parts = independent_parts(elements);
  const auto [here, there, threads] =
    time_parts(parts, {{"x", xt::linspace<double>(-1.0, 1.0, elements)}}, rounds * 12);
  std::printf("16 independent parts: %.2f ms on this thread (%.2f ms a part), %.2f ms on 2 "
              "workers, %.2f ms on 2 plain threads\n",
              here * 1e3, here * 1e3 / 16, there * 1e3, threads * 1e3);
  const int largest = sizes.back(), tenth = sizes[sizes.size() - 2];
  std::printf("graph_partition_nodes_per_s %.0f nodes/s\n", largest / partition_s[largest]);
  std::printf("graph_partition_growth_10x %.2f x\n", partition_s[largest] / partition_s[tenth]);
  std::printf("graph_distributed_partition_nodes_per_s %.0f nodes/s\n",
              largest / distributed_s.at(largest));
  std::printf("graph_distributed_partition_growth_10x %.2f x\n",
              distributed_s.at(largest) / distributed_s.at(tenth));
  std::printf("graph_parts_speedup_2_workers %.2f x\n", here / there);
  std::printf("graph_parts_speedup_2_plain_threads %.2f x\n", here / threads);
  return 0;
}
