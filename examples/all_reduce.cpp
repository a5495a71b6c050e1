// Data-parallel training over a world: every member fits the same linear model to its own shard
// of the data, and the members average their gradients with all_reduce each step, so they all
// hold the same weights throughout. Start it under a launcher,
//
//   mpirun -np 3 build/examples/all_reduce                 # gloo, the default
//   mpirun -np 3 build/examples/all_reduce --backend=mpi   # MPI's shared-memory transport
//
// or three times by hand (gloo), as rpc_world's header shows: TROUPE_RANK=0..2,
// TROUPE_WORLD_SIZE=3, TROUPE_ADDRESS=host:port of rank 0 (default 127.0.0.1:9100).
#include <troupe/collectives/collective_group.hpp>
#include <troupe/troupe.hpp>

#include <xtensor/xarray.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xrandom.hpp>
#include <xtensor/xview.hpp>

#include <cstring>
#include <iostream>

namespace {

/// x · w for a batch of rows x.
xt::xarray<double> predict(const xt::xarray<double>& x, const xt::xarray<double>& w) {
  return xt::sum(x * w, {1});
}

constexpr std::size_t features = 8;
constexpr std::size_t rows_per_member = 2000;

/// This member's shard: inputs and targets from the same true weights, with noise.
std::pair<xt::xarray<double>, xt::xarray<double>> shard(int rank, const xt::xarray<double>& truth) {
  xt::random::seed(static_cast<unsigned>(rank) + 1);
  xt::xarray<double> x = xt::random::randn<double>({rows_per_member, features});
  xt::xarray<double> y = predict(x, truth) + 0.01 * xt::random::randn<double>({rows_per_member});
  return {x, y};
}

} // namespace

int main(int argc, char** argv) {
  troupe::collective_options options;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--backend=mpi") == 0)
      options.backend = troupe::collective_backend::mpi;

  // snippet-begin: all_reduce
  troupe::runtime rt;
  troupe::world world{rt, troupe::world_options::from_environment()};
  std::vector<int> everyone(static_cast<std::size_t>(world.size()));
  for (int r = 0; r < world.size(); ++r)
    everyone[static_cast<std::size_t>(r)] = r;
  auto group = troupe::create_collective_group(world, everyone, options);

  const xt::xarray<double> truth = xt::linspace<double>(-1.0, 1.0, features);
  const auto [x, y] = shard(world.rank(), truth);
  xt::xarray<double> weights = xt::zeros<double>({features});
  for (int step = 0; step < 200; ++step) {
    const xt::xarray<double> error = predict(x, weights) - y;
    xt::xarray<double> gradient =
      xt::sum(x * xt::view(error, xt::all(), xt::newaxis()), {0}) / double(rows_per_member);
    group->all_reduce(gradient); // the sum over members ...
    gradient /= world.size(); // ... averaged
    weights -= 0.1 * gradient;
    if (world.rank() == 0 && step % 50 == 0)
      std::cout << "step " << step << ": local loss " << xt::mean(error * error)() << "\n";
  }
  // snippet-end: all_reduce

  // Every member must hold the same weights: compare them with rank 0's.
  xt::xarray<double> rank0_weights = weights;
  group->broadcast(rank0_weights, 0);
  const double spread = xt::amax(xt::abs(weights - rank0_weights))();
  const double miss = xt::amax(xt::abs(weights - truth))();
  if (world.rank() == 0)
    std::cout << "weights within " << miss << " of the truth; members differ by " << spread << "\n";
  return spread == 0.0 && miss < 0.01 ? 0 : 1;
}
