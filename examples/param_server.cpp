// Asynchronous SGD through a gradient server: two workers fit a linear model to their own
// shards and push gradients whenever they have them; the server (member "server") averages them
// in batches of 2, steps the model, and publishes the parameters, which the workers pull back
// after each push. Nobody waits for anybody, unlike all_reduce. Start three processes:
//
//   TROUPE_RANK=0 TROUPE_NAME=server   TROUPE_WORLD_SIZE=3 build/examples/param_server &
//   TROUPE_RANK=1 TROUPE_NAME=worker-1 TROUPE_WORLD_SIZE=3 build/examples/param_server &
//   TROUPE_RANK=2 TROUPE_NAME=worker-2 TROUPE_WORLD_SIZE=3 build/examples/param_server
//
// (rank 0 listens at TROUPE_ADDRESS, default 127.0.0.1:9100). The server exits 0 once the model
// is within 0.05 of the true weights.
#include <troupe/servers/push_pull_grad_server.hpp>
#include <troupe/troupe.hpp>

#include <xtensor/xmath.hpp>
#include <xtensor/xrandom.hpp>
#include <xtensor/xview.hpp>

#include <iostream>
#include <thread>

namespace {

constexpr std::size_t features = 4;
constexpr std::size_t rows = 500;

const troupe::grad_server_options options{.primary = "server",
                                          .secondaries = {"server"},
                                          .method = troupe::reduce_method::mean,
                                          .reduce_batch_size = 2,
                                          .flush_after = std::chrono::milliseconds{200}};

xt::xarray<float> truth() { return xt::linspace<float>(-1.0f, 1.0f, features); }

/// The worker's loop: gradients of the squared error on its shard, pushed; parameters pulled.
// snippet-begin: worker
void work(troupe::rpc_group& group, int rank) {
  xt::random::seed(static_cast<unsigned>(rank));
  const xt::xarray<float> x = xt::random::randn<float>({rows, features});
  const xt::xarray<float> y = xt::sum(x * truth(), {1});
  troupe::push_pull_grad_server server{group, "sgd", options};
  troupe::versioned_model model;
  server.pull(model); // the first parameters, published before the barrier main() passed
  for (int step = 0; step < 150; ++step) {
    const auto& w = model.state.at("w");
    const xt::xarray<float> error = xt::sum(x * w, {1}) - y;
    troupe::state_dict gradients{
      {"w", xt::sum(x * xt::view(error, xt::all(), xt::newaxis()), {0}) / float(rows)}};
    server.push(model, gradients); // returns once queued; model gets the newest parameters
  }
}
// snippet-end: worker

} // namespace

int main() {
  troupe::runtime rt;
  troupe::world world{rt, troupe::world_options::from_environment()};
  auto group = world.create_rpc_group("training", world.members());
  if (world.name() != "server") {
    group.barrier(); // the server is up
    work(group, world.rank());
    group.barrier(); // done pushing
    return 0;
  }
  // snippet-begin: server
  troupe::push_pull_grad_server_host host{group, "sgd", options};
  host.manage_model({{{"w", xt::zeros<float>({features})}}, 0},
                    [](troupe::state_dict& parameters, const troupe::state_dict& gradients) {
                      parameters.at("w") -= 0.2f * gradients.at("w");
                    });
  host.start();
  group.barrier(); // the server is up
  group.barrier(); // the workers are done
  std::this_thread::sleep_for(std::chrono::milliseconds{500}); // leftovers flush
  host.stop();
  // snippet-end: server
  host.watch();
  const auto model = host.model();
  const float miss = xt::amax(xt::abs(model.state.at("w") - truth()))();
  std::cout << model.base() << " steps; weights within " << miss << " of the truth\n";
  return miss < 0.05f ? 0 : 1;
}
