// bench/hosts: troupe across hosts against its engines' floors across the same hosts, in one
// run: two hosts made of network namespaces (bench/hosts.sh makes them with
// tests/hosts/testbed.sh and starts this program on each), rank 0 on host 0 and rank 1 on
// host 1, which measures. Each round: tiny rpc_sync calls alternating call by call with raw CAF
// requests to an echo actor on a thread of its own that rank 0 publishes through the same
// middleman (the floor a troupe call can reach: a task never runs on the network thread); then
// rpc_sync calls carrying 64 MiB; then 64 MiB all_reduces of a troupe gloo group alternating
// with raw gloo's (its own context, FileStore rendezvous in a folder both hosts share).
// The last lines are `name value unit`, read by tooling.
//
//   environment: TROUPE_BENCH_RANK (0 or 1), TROUPE_BENCH_IP (this host's address),
//   TROUPE_ADDRESS (rank 0's host:port), TROUPE_BENCH_DIR (shared), TROUPE_BENCH_ROUNDS
#include "median.hpp"

#include "troupe/actors/network.hpp"
#include "troupe/actors/tensor_serialization.hpp"
#include "troupe/collectives/collective_group.hpp"
#include "troupe/world/world.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

TROUPE_TASK(hosts_bench_add, [](int a, int b) { return a + b; });
TROUPE_TASK(hosts_bench_size, [](const xt::xarray<float>& t) { return t.size(); });

namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int tiny_calls = 200;
constexpr int large_calls = 2;
constexpr int all_reduces = 3;
constexpr std::size_t floats_in_64_mib = std::size_t{16} << 20;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) {
    std::fprintf(stderr, "bench/hosts: %s is not set (run bench/hosts.sh)\n", name);
    std::exit(2);
  }
  return value;
}

using troupe::bench::median;

template <class F>
double timed_us(F&& work) {
  const auto start = clock_type::now();
  work();
  return std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
}

/// Spawned with an argument it does not need: CAF 0.17 binds a reference to a null argument
/// tuple for a function actor spawned without any.
caf::behavior raw_echo(caf::event_based_actor*, std::int32_t) {
  return {[](std::int32_t a, std::int32_t b) { return a + b; }};
}

troupe::world_options options(int rank) {
  troupe::world_options o;
  o.rank = rank;
  o.world_size = 2;
  o.name = "rank-" + std::to_string(rank);
  o.address = environment("TROUPE_ADDRESS");
  o.allow_insecure = true; // the bench's hosts exist only inside this machine
  o.timeout = 60s;
  return o;
}

/// Raw gloo between the two hosts, joined through a FileStore in the shared folder.
std::shared_ptr<gloo::rendezvous::Context> raw_gloo(int rank) {
  auto device = gloo::transport::tcp::CreateDevice(
    gloo::transport::tcp::attr{environment("TROUPE_BENCH_IP").c_str()});
  gloo::rendezvous::FileStore store{environment("TROUPE_BENCH_DIR")};
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, 2);
  context->connectFullMesh(store, device);
  return context;
}

void raw_all_reduce(const std::shared_ptr<gloo::rendezvous::Context>& context,
                    std::vector<float>& t, std::uint32_t tag) {
  gloo::AllreduceOptions o{context};
  o.setOutput(t.data(), t.size());
  o.setReduceFunction(
    static_cast<void (*)(void*, const void*, const void*, std::size_t)>(&gloo::sum<float>));
  o.setTag(tag);
  gloo::allreduce(o);
}

struct figures {
  std::vector<double> troupe_us, raw_us, large_ms, troupe_reduce_ms, raw_reduce_ms;
};

/// Both ranks: the all-reduces of a round, alternating; rank 1 keeps their times.
void all_reduce_turns(troupe::collective_group& group,
                      const std::shared_ptr<gloo::rendezvous::Context>& raw, std::uint32_t& tag,
                      figures* out) {
  std::vector<float> t(floats_in_64_mib, 1.0f);
  for (int i = 0; i < all_reduces; ++i) {
    group.barrier();
    const auto ours = timed_us([&] { group.all_reduce(t); }) / 1000;
    group.barrier();
    const auto theirs = timed_us([&] { raw_all_reduce(raw, t, tag++); }) / 1000;
    if (out != nullptr) {
      out->troupe_reduce_ms.push_back(ours);
      out->raw_reduce_ms.push_back(theirs);
    }
  }
}

/// Rank 1: the calls of a round.
void calls(troupe::rpc_group& group, caf::scoped_actor& self, const caf::actor& echo,
           figures& out) {
  for (int i = 0; i < tiny_calls; ++i) {
    out.troupe_us.push_back(
      timed_us([&] { (void)group.rpc_sync("rank-0", hosts_bench_add, i, 1); }));
    out.raw_us.push_back(timed_us([&] {
      self->request(echo, caf::infinite, std::int32_t{i}, std::int32_t{1})
        .receive([](std::int32_t) {}, [](caf::error&) { std::abort(); });
    }));
  }
  const xt::xarray<float> large = xt::ones<float>({floats_in_64_mib});
  for (int i = 0; i < large_calls; ++i)
    out.large_ms.push_back(
      timed_us([&] { (void)group.rpc_sync("rank-0", hosts_bench_size, large); }) / 1000);
}

void report(const figures& f) {
  const double ours = median(f.troupe_us), raw = median(f.raw_us);
  const double reduce = median(f.troupe_reduce_ms), raw_reduce = median(f.raw_reduce_ms);
  std::printf("hosts_rpc_sync_median_us %.1f us\n", ours);
  std::printf("hosts_raw_caf_median_us %.1f us\n", raw);
  std::printf("hosts_rpc_sync_ratio_to_raw_caf %.2f x\n", ours / raw);
  std::printf("hosts_rpc_64m_ms %.1f ms\n", median(f.large_ms));
  std::printf("hosts_allreduce_64m_gloo_ms %.1f ms\n", reduce);
  std::printf("hosts_allreduce_64m_gloo_raw_ms %.1f ms\n", raw_reduce);
  std::printf("hosts_allreduce_64m_gloo_ratio_to_raw %.2f x\n", reduce / raw_reduce);
}

int run(int rank, int rounds) {
  troupe::runtime rt;
  auto& state = troupe::runtime_state_of(rt);
  troupe::world world{rt, options(rank)};
  auto group = world.create_rpc_group("bench", world.members());
  auto collective = troupe::create_collective_group(world, {0, 1}, {.timeout = 120s});
  auto raw = raw_gloo(rank);
  std::uint32_t tag = 0;
  caf::actor echo;
  if (rank == 0) {
    echo = state.system->spawn<caf::detached>(raw_echo, std::int32_t{1});
    const auto port = troupe::detail::publish(state, echo, {environment("TROUPE_BENCH_IP"), 0}, {});
    group.pair("echo_port", static_cast<int>(port));
  }
  group.barrier();
  figures out;
  caf::scoped_actor self{*state.system};
  if (rank == 1) {
    const auto port = static_cast<std::uint16_t>(group.get_paired<int>("echo_port").to_here());
    const auto host =
      environment("TROUPE_ADDRESS").substr(0, environment("TROUPE_ADDRESS").find(':'));
    echo = troupe::detail::connect(state, {host, port}, {}, clock_type::now() + 10s);
  }
  for (int round = 0; round < rounds; ++round) {
    if (rank == 1)
      calls(group, self, echo, out);
    group.barrier();
    all_reduce_turns(*collective, raw, tag, rank == 1 ? &out : nullptr);
  }
  group.barrier();
  if (rank == 1)
    report(out);
  else
    caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  return 0;
}

} // namespace

int main() {
  return run(std::stoi(environment("TROUPE_BENCH_RANK")),
             std::stoi(environment("TROUPE_BENCH_ROUNDS")));
}
