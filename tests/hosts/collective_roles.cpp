// Collectives across hosts: every operation of a gloo group and a 64 MiB all_reduce; a host's
// link cut mid-all_reduce; graph's distributed partition over the hosts.
#include "host_roles.hpp"
#include "host_tasks.hpp"

#include "../collectives/collective_cases.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/collectives/collective_group.hpp"
#include "troupe/graph/distributed.hpp"

#include <xtensor/xbuilder.hpp>

namespace troupe::hosts {
namespace {

/// A 64 MiB all_reduce, then machin's collective cases and troupe's own (last: their final
/// case leaves the members' group counts apart). The test gives host 2 its interface by name
/// (TROUPE_SOCKET_IFNAME); the others find their address themselves.
TROUPE_HOST_ROLE(gloo_every_operation) {
  troupe::world world{rt, member_options()};
  {
    auto group = troupe::create_collective_group(world, {0, 1, 2}, {.timeout = 60s});
    std::vector<float> t(std::size_t{16} << 20, world.rank() + 1.0f);
    group->all_reduce(t);
    require(t.front() == 6.0f && t.back() == 6.0f, "a 64 MiB all_reduce summed three members");
    group->barrier();
  }
  troupe::testing::run_collective_cases(world, {});
}

/// Host 2's link is cut (on mark "cut") while all three all-reduce: ranks 0 and 1 fail with
/// peer_lost or timeout_error within the group's timeout, and go on between themselves.
TROUPE_HOST_ROLE(cut_all_reduce) {
  troupe::world world{rt, member_options()};
  const bool victim = world.rank() == 2;
  auto all = world.create_rpc_group("all", world.members());
  auto group = troupe::create_collective_group(world, {0, 1, 2}, {.timeout = 5s});
  std::vector<float> t(std::size_t{1} << 18, 1.0f);
  for (int i = 0; i < 3; ++i)
    group->all_reduce(t);
  group->barrier();
  if (world.rank() == 0)
    mark("cut");
  const auto start = std::chrono::steady_clock::now();
  const auto how = failure_of([&] { group->all_reduce(t); }, 30s);
  const auto took = std::chrono::steady_clock::now() - start;
  require(how == "peer_lost" || how == "timeout_error", "the all_reduce ended with " + how);
  require(took < 10s, "within the group's timeout of 5 s");
  if (victim) {
    const auto seen = failure_of([&] { all.rpc_sync("0", 2s, host_add, 1, 1); }, 30s);
    require(seen == "peer_lost" || seen == "timeout_error", "the cut-off member: " + seen);
    return;
  }
  auto rest = world.create_rpc_group("rest", {world.member_name(0), world.member_name(1)});
  require(rest.rpc_sync(world.rank() == 0 ? "1" : "0", host_add, 2, 2) == 4,
          "the rest of the world goes on");
  rest.barrier(20s);
}

xt::xarray<double> x_of(int rank) { return xt::ones<double>({4}) * (rank + 1.0); }

/// other_seeds.md §2c 19 over three hosts: y = x + x of the next rank, z = y + y of the next.
TROUPE_HOST_ROLE(graph_partition) {
  using namespace troupe::graph;
  troupe::world world{rt, member_options()};
  auto g = troupe::create_collective_group(world, {0, 1, 2});
  const int left = (g->rank() + 2) % 3, right = (g->rank() + 1) % 3, right2 = (right + 1) % 3;
  auto x = placeholder("x", {4});
  auto y = x + staple_distributed_send(x, left, "42", make_distributed_recv(right, "42", {4}));
  auto z = y + staple_distributed_send(y, left, "43", make_distributed_recv(right, "43", {4}));
  const auto partition = find_distributed_partition(*g, make_outputs({{"z", z}}));
  verify_distributed_partition(*g, partition);
  const auto got = execute_distributed_partition(partition, *g, {{"x", x_of(g->rank())}}).at("z");
  const xt::xarray<double> want = x_of(g->rank()) + 2.0 * x_of(right) + x_of(right2);
  require(xt::allclose(got, want), "z from three hosts");
  g->barrier();
}

} // namespace
} // namespace troupe::hosts
