// bench/rpc: troupe's rpc_group against raw CAF request/response through the middleman (the
// engine's floor), between two processes on 127.0.0.1, interleaved in one run.
//
//   build/bench/rpc [rounds]
//
// This process is rank 1 and starts rank 0 (itself again), which keeps the world's key tables,
// as in a world of many members. They form two worlds in turn: one over TCP alone
// (world_options::shared_memory = false), one with same-host members' shared-memory inboxes
// (the default). In each, every round times tiny rpc_sync calls in turn with raw CAF requests
// to an echo actor rank 0 publishes through the same middleman (call by call over TCP, block
// by block through shared memory: see tiny_calls), then tiny registered_sync calls to a
// service rank 0 offers, and lookups of its key (is_registered: the round trip to rank 0 a
// registered call skips once it knows the owner), then a window of pipelined rpc_async calls,
// then rpc_sync of a 1 MiB tensor there and back. Over TCP a third contender runs in the same
// turns: the raw echo again, in an actor with a thread of its own. CAF runs an actor that a
// message from the network wakes on the multiplexer thread itself, so the raw echo never
// leaves the thread that read the request; a troupe task cannot (it would stop every
// connection's reads and heartbeats while it runs), and the detached echo pays the same
// hand-off to another thread and back. The last lines are `name value unit`, read by tooling.
#include "median.hpp"

#include "troupe/actors/network.hpp"
#include "troupe/actors/tensor_serialization.hpp"
#include "troupe/world/world.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "../tests/queues/process_support.hpp" // wait_for: a peer waited for with a deadline
#include "spawn_self.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

TROUPE_TASK(rpc_bench_add, [](int a, int b) { return a + b; });
TROUPE_TASK(rpc_bench_echo, [](xt::xarray<float> t) { return t; });

namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int calls_per_block = 200;
constexpr int spaced_calls = 20;
constexpr int pipelined_calls = 4000;
constexpr int window = 256;

using troupe::bench::median;

double since_us(clock_type::time_point start) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
}

troupe::world_options options_for(int rank, int port, bool shared_memory) {
  troupe::world_options options;
  options.shared_memory = shared_memory;
  options.rank = rank;
  options.world_size = 2;
  options.address = "127.0.0.1:" + std::to_string(port);
  options.timeout = 30s;
  return options;
}

/// Spawned with an argument it does not need: CAF 0.17 binds a reference to a null argument
/// tuple for a function actor spawned without any (undefined behaviour).
caf::behavior raw_echo(caf::event_based_actor*, std::int32_t /*rank*/) {
  return {[](std::int32_t a, std::int32_t b) { return a + b; }};
}

/// Rank 0: serves the world, and publishes the raw echo actors the calls are compared with.
int serve(int port) {
  troupe::runtime rt;
  auto& state = troupe::runtime_state_of(rt);
  auto echo = state.system->spawn(raw_echo, std::int32_t{1});
  const auto raw_port = troupe::detail::publish(state, echo, {"127.0.0.1", 0}, {});
  auto detached_echo = state.system->spawn<caf::detached>(raw_echo, std::int32_t{1});
  const auto detached_port = troupe::detail::publish(state, detached_echo, {"127.0.0.1", 0}, {});
  for (const bool shared_memory : {false, true}) {
    troupe::world world{rt, options_for(0, shared_memory ? port + 1 : port, shared_memory)};
    auto group = world.create_rpc_group("bench", world.members());
    group.pair("raw_port", static_cast<int>(raw_port));
    group.pair("detached_port", static_cast<int>(detached_port));
    group.register_service("add", [](int a, int b) { return a + b; });
    group.barrier(); // the port is paired
    group.barrier(); // rank 1 is done
  }
  troupe::detail::unpublish(state, echo, raw_port);
  troupe::detail::unpublish(state, detached_echo, detached_port);
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(detached_echo, caf::exit_reason::user_shutdown);
  return 0;
}

struct figures {
  std::vector<double> troupe_us, raw_us, detached_us, spaced_us, registered_us, lookup_us,
    calls_per_s, tensor_ms;
};

/// The raw CAF echoes rank 0 publishes: on the network thread, and on a thread of its own.
struct raw_echoes {
  caf::actor inline_echo, detached_echo;
};

/// Tiny rpc_sync calls and raw CAF requests. Over TCP they alternate call by call, so that both
/// meet the same state of the network stack. Through shared memory they take turns by block:
/// a call that follows a raw CAF request finds the other process's threads on cold, halted
/// cores (this VM wakes one in tens of microseconds), which measures the interleaving, not the
/// call (calls 1 ms apart are timed on their own, as `spaced`).
void tiny_calls(troupe::rpc_group& group, caf::scoped_actor& self, const raw_echoes& raw,
                bool by_block, figures& out) {
  std::vector<double> troupe_block, raw_block, detached_block;
  const auto call_troupe = [&](int i) {
    const auto start = clock_type::now();
    (void)group.rpc_sync("rank-0", rpc_bench_add, i, 1);
    troupe_block.push_back(since_us(start));
  };
  const auto call_raw = [&](const caf::actor& echo, int i, std::vector<double>& block) {
    const auto start = clock_type::now();
    self->request(echo, caf::infinite, std::int32_t{i}, std::int32_t{1})
      .receive([](std::int32_t) {}, [](caf::error&) { std::abort(); });
    block.push_back(since_us(start));
  };
  for (int i = 0; i < calls_per_block; ++i) {
    call_troupe(i);
    if (!by_block) {
      call_raw(raw.inline_echo, i, raw_block);
      call_raw(raw.detached_echo, i, detached_block);
    }
  }
  for (int i = 0; by_block && i < calls_per_block; ++i)
    call_raw(raw.inline_echo, i, raw_block);
  out.troupe_us.push_back(median(troupe_block));
  out.raw_us.push_back(median(raw_block));
  if (!detached_block.empty())
    out.detached_us.push_back(median(detached_block));
  if (!by_block)
    return;
  std::vector<double> spaced;
  for (int i = 0; i < spaced_calls; ++i) {
    std::this_thread::sleep_for(1ms);
    const auto start = clock_type::now();
    (void)group.rpc_sync("rank-0", rpc_bench_add, i, 1);
    spaced.push_back(since_us(start));
  }
  out.spaced_us.push_back(median(spaced));
}

/// The median time of `calls_per_block` calls of `call(i)`, in microseconds.
template <class Call>
double median_of_calls(Call&& call) {
  std::vector<double> times;
  for (int i = 0; i < calls_per_block; ++i) {
    const auto start = clock_type::now();
    call(i);
    times.push_back(since_us(start));
  }
  return median(std::move(times));
}

void one_round(troupe::rpc_group& group, caf::scoped_actor& self, const raw_echoes& raw,
               const xt::xarray<float>& tensor, bool shared_memory, figures& out) {
  tiny_calls(group, self, raw, shared_memory, out);

  out.registered_us.push_back(
    median_of_calls([&](int i) { (void)group.registered_sync<int>("add", i, 1); }));
  out.lookup_us.push_back(median_of_calls([&](int) { (void)group.is_registered("add"); }));

  const auto start = clock_type::now();
  std::vector<troupe::async_result<int>> in_flight;
  for (int i = 0; i < pipelined_calls; ++i) {
    in_flight.push_back(group.rpc_async("rank-0", rpc_bench_add, i, 1));
    if (in_flight.size() == window) {
      for (auto& r : in_flight)
        (void)r.get();
      in_flight.clear();
    }
  }
  for (auto& r : in_flight)
    (void)r.get();
  out.calls_per_s.push_back(pipelined_calls / (since_us(start) / 1e6));

  std::vector<double> tensor_block;
  for (int i = 0; i < 10; ++i) {
    auto t0 = clock_type::now();
    auto back = group.rpc_sync("rank-0", rpc_bench_echo, tensor);
    tensor_block.push_back(since_us(t0) / 1000);
    if (back.size() != tensor.size())
      std::abort();
  }
  out.tensor_ms.push_back(median(tensor_block));
}

/// Rank 1's part in one world: `rounds` rounds against rank 0.
figures measure(int port, bool shared_memory, int rounds) {
  figures out;
  troupe::runtime rt;
  troupe::world world{rt, options_for(1, port, shared_memory)};
  auto group = world.create_rpc_group("bench", world.members());
  group.barrier();
  auto& state = troupe::runtime_state_of(rt);
  const auto echo_at = [&](const std::string& key) {
    const auto port = static_cast<std::uint16_t>(group.get_paired<int>(key).to_here());
    return troupe::detail::connect(state, {"127.0.0.1", port}, {}, clock_type::now() + 10s);
  };
  const raw_echoes raw{echo_at("raw_port"), echo_at("detached_port")};
  caf::scoped_actor self{*state.system};
  const xt::xarray<float> tensor = xt::ones<float>({std::size_t{262144}}); // 1 MiB
  for (int round = 0; round < rounds; ++round)
    one_round(group, self, raw, tensor, shared_memory, out);
  group.barrier();
  return out;
}

int lead(int rounds) {
  const int port = troupe::detail::free_loopback_port();
  const pid_t peer = troupe::bench::spawn_self("TROUPE_RPC_BENCH_PORT=" + std::to_string(port));
  const auto tcp = measure(port, false, rounds);
  const auto local = measure(port + 1, true, rounds);
  (void)troupe::testing::wait_for(peer, std::chrono::seconds{60});

  const double tcp_us = median(tcp.troupe_us), raw_us = median(tcp.raw_us);
  const double detached_us = median(tcp.detached_us);
  std::printf("rpc: 2 processes on 127.0.0.1, %d rounds a world, contenders interleaved, "
              "medians\n",
              rounds);
  std::printf("%-42s %10.1f us\n", "troupe rpc_sync, tiny task, TCP", tcp_us);
  std::printf("%-42s %10.1f us\n", "raw CAF request/response (same run)", raw_us);
  std::printf("%-42s %10.1f us\n", "raw CAF, echo on a thread of its own", detached_us);
  std::printf("%-42s %10.1f us\n", "troupe rpc_sync, tiny task, shared memory",
              median(local.troupe_us));
  std::printf("%-42s %10.1f us\n", "raw CAF request/response (same run)", median(local.raw_us));
  std::printf("%-42s %10.1f us\n", "troupe rpc_sync, shared memory, 1 ms apart",
              median(local.spaced_us));
  std::printf("%-42s %10.1f us\n", "troupe registered_sync, TCP", median(tcp.registered_us));
  std::printf("%-42s %10.1f us\n", "troupe registered_sync, shared memory",
              median(local.registered_us));
  std::printf("%-42s %10.1f us\n", "key lookup at rank 0 (is_registered)", median(local.lookup_us));
  std::printf("%-42s %10.0f calls/s\n", "troupe rpc_async, 256 in flight, TCP",
              median(tcp.calls_per_s));
  std::printf("%-42s %10.0f calls/s\n", "troupe rpc_async, 256 in flight, shm",
              median(local.calls_per_s));
  std::printf("%-42s %10.2f ms\n", "troupe rpc_sync 1 MiB echo, TCP", median(tcp.tensor_ms));
  std::printf("%-42s %10.2f ms\n", "troupe rpc_sync 1 MiB echo, shared memory",
              median(local.tensor_ms));
  std::printf("rpc_sync_tcp_median_us %.1f us\n", tcp_us);
  std::printf("rpc_sync_tcp_ratio_to_raw_caf %.2f x\n", tcp_us / raw_us);
  std::printf("rpc_sync_tcp_ratio_to_raw_caf_off_network_thread %.2f x\n", tcp_us / detached_us);
  std::printf("rpc_sync_local_median_us %.1f us\n", median(local.troupe_us));
  std::printf("rpc_registered_sync_local_median_us %.1f us\n", median(local.registered_us));
  std::printf("rpc_key_lookup_median_us %.1f us\n", median(local.lookup_us));
  std::printf("rpc_async_calls_per_s %.0f calls/s\n", median(local.calls_per_s));
  std::printf("rpc_1m_tensor_ms %.2f ms\n", median(local.tensor_ms));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (const char* port = std::getenv("TROUPE_RPC_BENCH_PORT"))
    return serve(std::atoi(port));
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  if (rounds < 1) {
    std::fprintf(stderr, "usage: rpc [rounds, at least 1; default 5]\n");
    return 2;
  }
  return lead(rounds);
}
