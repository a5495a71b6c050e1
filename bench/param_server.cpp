// bench/param_server: troupe's parameter servers against the same bytes through a plain
// rpc_sync (the transport's floor), three processes on 127.0.0.1, interleaved in one run.
//
//   build/bench/param_server [rounds]
//
// This process is client 0 and starts the server (member "server") and client 1 (itself
// again). Each round, both clients time, one after the other: a push then pull of a 10 MiB state
// dict through the model server, and an rpc_sync that sends the same state dict to the server
// and gets it back (10 MiB each way, as push + pull). Then both push 10 MiB gradients to the
// gradient server (batch 2, one secondary on the server) as fast as they can. The last lines are
// `name value unit`, read by tooling.
#include "median.hpp"

#include "troupe/actors/network.hpp"
#include "troupe/servers/push_pull_grad_server.hpp"
#include "troupe/servers/push_pull_model_server.hpp"
#include "troupe/world/world.hpp"

#include "../tests/queues/process_support.hpp" // wait_for: a peer waited for with a deadline
#include "spawn_self.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

TROUPE_TASK(param_bench_echo, [](troupe::state_dict state) { return state; });

namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::size_t tensors = 10;
constexpr std::size_t floats_per_tensor = 1 << 18; // 10 x 1 MiB
constexpr int grad_pushes_per_client = 20;

using troupe::bench::median;

double since_ms(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

troupe::state_dict ten_mib(float value) {
  troupe::state_dict state;
  for (std::size_t i = 0; i < tensors; ++i) {
    xt::xarray<float> t = xt::xarray<float>::from_shape({floats_per_tensor});
    t.fill(value);
    state["layer" + std::to_string(i)] = std::move(t);
  }
  return state;
}

troupe::world_options options_for(int rank, int port) {
  troupe::world_options options;
  options.name = rank == 1 ? "server" : "client-" + std::to_string(rank);
  options.rank = rank;
  options.world_size = 3;
  options.address = "127.0.0.1:" + std::to_string(port);
  options.timeout = 60s;
  return options;
}

const troupe::grad_server_options grad_options{
  .primary = "server", .secondaries = {"server"}, .reduce_batch_size = 2, .flush_after = 100ms};

struct figures {
  std::vector<double> model_ms, rpc_ms;
  std::vector<bool> pushes_won; // by round: a lost push pulls the newer model as well
  double grad_pushes_per_s = 0;
};

/// Runs the server's part: hosts both servers until the clients are done.
void serve(troupe::rpc_group& group, int rounds) {
  troupe::push_pull_model_server_host models{group, "models"};
  troupe::push_pull_grad_server_host grads{group, "grads", grad_options};
  grads.manage_model({ten_mib(0.0f), 0}, [](troupe::state_dict& p, const troupe::state_dict& g) {
    for (auto& [key, tensor] : p)
      tensor -= 0.01f * g.at(key);
  });
  grads.start();
  group.barrier(); // hosted
  for (int round = 0; round < rounds; ++round)
    group.barrier();
  group.barrier(); // gradients pushed
  grads.stop();
  grads.watch();
  group.barrier(); // stopped: rank 0, which keeps the key tables, may go
}

/// A client's part: `rounds` interleaved rounds, then its gradient pushes.
figures run_client(troupe::rpc_group& group, int rounds) {
  figures out;
  group.barrier(); // hosted
  troupe::push_pull_model_server models{group, "models"};
  troupe::versioned_model model{ten_mib(1.0f), 0};
  for (int round = 0; round < rounds; ++round) {
    auto start = clock_type::now();
    out.pushes_won.push_back(models.push(model)); // lost: the other client pushed first
    models.pull(model);
    out.model_ms.push_back(since_ms(start));
    start = clock_type::now();
    auto back = group.rpc_sync("server", param_bench_echo, model.state);
    out.rpc_ms.push_back(since_ms(start));
    if (back.size() != tensors)
      std::abort();
    group.barrier();
  }
  troupe::push_pull_grad_server grads{group, "grads", grad_options};
  const auto gradients = ten_mib(0.5f);
  troupe::versioned_model replica;
  const auto start = clock_type::now();
  for (int i = 0; i < grad_pushes_per_client; ++i)
    grads.push(replica, gradients);
  out.grad_pushes_per_s = grad_pushes_per_client / (since_ms(start) / 1000);
  group.barrier(); // gradients pushed
  group.barrier(); // the server has stopped
  return out;
}

int member(int rank, int port, int rounds) {
  troupe::runtime rt;
  troupe::world world{rt, options_for(rank, port)};
  auto group = world.create_rpc_group("bench", world.members());
  if (rank == 1)
    serve(group, rounds);
  else
    run_client(group, rounds);
  return 0;
}

pid_t spawn_member(int rank, int port, int rounds) {
  return troupe::bench::spawn_self("TROUPE_PARAM_BENCH=" + std::to_string(rank) + ":" +
                                   std::to_string(port) + ":" + std::to_string(rounds));
}

int lead(int rounds) {
  const int port = troupe::detail::free_loopback_port();
  const pid_t server = spawn_member(1, port, rounds);
  const pid_t other_client = spawn_member(2, port, rounds);
  figures out;
  {
    troupe::runtime rt;
    troupe::world world{rt, options_for(0, port)};
    auto group = world.create_rpc_group("bench", world.members());
    out = run_client(group, rounds);
  }
  (void)troupe::testing::wait_for(server, std::chrono::seconds{60});
  (void)troupe::testing::wait_for(other_client, std::chrono::seconds{60});

  const double model_ms = median(out.model_ms), rpc_ms = median(out.rpc_ms);
  const double gib = 2.0 * tensors * floats_per_tensor * sizeof(float) / double(1 << 30);
  std::printf("param_server: 1 server and 2 clients on 127.0.0.1, %d rounds, medians of client 0\n",
              rounds);
  std::printf("rounds (model server ms, push won W or lost L to the other client; rpc ms):\n");
  for (std::size_t r = 0; r < out.model_ms.size(); ++r)
    std::printf("  %2zu: %7.2f %c %7.2f\n", r, out.model_ms[r], out.pushes_won[r] ? 'W' : 'L',
                out.rpc_ms[r]);
  std::printf("%-48s %10.2f ms %6.2f GiB/s\n", "model server push + pull, 10 MiB", model_ms,
              gib / (model_ms / 1000));
  std::printf("%-48s %10.2f ms %6.2f GiB/s\n", "rpc_sync of the same state dict, there and back",
              rpc_ms, gib / (rpc_ms / 1000));
  std::printf("%-48s %10.1f /s %6.2f GiB/s\n", "gradient server push (10 MiB) + pull, batch 2",
              out.grad_pushes_per_s, out.grad_pushes_per_s * gib);
  std::printf("model_server_push_pull_ms %.2f ms\n", model_ms);
  std::printf("model_server_ratio_to_rpc %.2f x\n", model_ms / rpc_ms);
  std::printf("grad_server_pushes_per_s %.1f pushes/s\n", out.grad_pushes_per_s);
  std::printf("grad_server_ratio_to_rpc %.2f x\n", (1000.0 / out.grad_pushes_per_s) / rpc_ms);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (const char* role = std::getenv("TROUPE_PARAM_BENCH")) {
    int rank = 0, port = 0, rounds = 0;
    if (std::sscanf(role, "%d:%d:%d", &rank, &port, &rounds) != 3)
      return 2;
    return member(rank, port, rounds);
  }
  return lead(argc > 1 ? std::max(1, std::atoi(argv[1])) : 20);
}
