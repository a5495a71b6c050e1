// `world --store`: a world whose tables are in etcd (world_options::store) against the
// embedded one, with one etcd server this program starts on 127.0.0.1 (Debian's etcd-server).
//   world_store_calls_per_s / world_embedded_calls_per_s: rpc_sync from rank 0 to rank 1 of a
//     world of two for two seconds, the two kinds interleaved over 7 rounds, medians; the store
//     is not on a call's path, so they should be alike (world_store_calls_ratio).
//   world_takeover_ms: a world of three through the store; the oldest member (the coordinator)
//     is SIGKILLed, and the time runs until the other two have created a group and met at its
//     barrier, which needs a coordinator (the store's lease TTL, 3 s, plus the watch).
#include "spawn_self.hpp"
#include "world_store_bench.hpp"

#include "../tests/world/store/etcd_servers.hpp"

#include "troupe/actors/network.hpp"
#include "troupe/world/world.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

TROUPE_TASK(store_bench_next, [](int x) { return x + 1; });

namespace troupe::bench {

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

constexpr int rounds = 7;

/// A member's part, as "rank size address-or-store".
troupe::world_options options_of(const std::string& spec) {
  troupe::world_options options;
  char where[512] = {};
  std::sscanf(spec.c_str(), "%d %d %511s", &options.rank, &options.world_size, where);
  options.name = std::to_string(options.rank);
  options.timeout = 60s;
  options.rpc_threads = 1;
  if (std::string_view{where}.starts_with("etcd://"))
    options.store = where;
  else
    options.address = where;
  return options;
}

pid_t start_member(int rank, int size, const std::string& where) {
  return spawn_self("TROUPE_BENCH_STORE_MEMBER=" + std::to_string(rank) + " " +
                    std::to_string(size) + " " + where);
}

int exit_of(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

std::vector<std::string> names(int size) {
  std::vector<std::string> all;
  for (int rank = 0; rank < size; ++rank)
    all.push_back(std::to_string(rank));
  return all;
}

/// Rank 0 of a world of two at `where`: rpc_sync calls to rank 1 for two seconds (after a
/// quarter of a second not counted, while the new processes settle), a second.
double calls_per_s(troupe::runtime& rt, const std::string& where) {
  const auto other = start_member(1, 2, where);
  double rate = 0;
  {
    troupe::world world{rt, options_of("0 2 " + where)};
    auto group = world.create_rpc_group("calls", names(2));
    for (const auto warm = clock_type::now(); clock_type::now() - warm < 250ms;)
      (void)group.rpc_sync("1", store_bench_next, 0);
    int calls = 0;
    const auto start = clock_type::now();
    while (clock_type::now() - start < 2s)
      for (int i = 0; i < 100; ++i, ++calls)
        (void)group.rpc_sync("1", store_bench_next, i);
    rate = calls / std::chrono::duration<double>(clock_type::now() - start).count();
    group.barrier();
  }
  exit_of(other);
  return rate;
}

/// Rank 1 of a world of three at `store`, whose rank 0 (the oldest member: the coordinator) it
/// SIGKILLs; how long until it and rank 2 have made a group and met at its barrier.
double takeover_ms(troupe::runtime& rt, const std::string& store) {
  const auto coordinator = start_member(0, 3, store);
  std::this_thread::sleep_for(1s); // claims its rank first: the oldest member
  const auto other = start_member(2, 3, store);
  double ms = 0;
  {
    troupe::world world{rt, options_of("1 3 " + store)};
    auto group = world.create_rpc_group("all", names(3));
    group.barrier();
    const auto killed = clock_type::now();
    ::kill(coordinator, SIGKILL);
    auto after = world.create_rpc_group("after", {"1", "2"});
    after.barrier();
    ms = std::chrono::duration<double, std::milli>(clock_type::now() - killed).count();
    after.barrier();
  }
  exit_of(coordinator);
  exit_of(other);
  return ms;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

} // namespace

int store_member(const std::string& spec) {
  troupe::runtime rt;
  troupe::world world{rt, options_of(spec)};
  if (world.size() == 2) {
    auto group = world.create_rpc_group("calls", names(2));
    group.barrier();
    return 0;
  }
  auto group = world.create_rpc_group("all", names(3));
  group.barrier();
  if (world.rank() == 0) { // killed meanwhile
    std::this_thread::sleep_for(60s);
    return 1;
  }
  auto after = world.create_rpc_group("after", {"1", "2"});
  after.barrier();
  after.barrier();
  return 0;
}

int store_figures() {
  if (!troupe::testing::etcd_servers::installed()) {
    std::fprintf(stderr, "world --store: etcd is not installed (scripts/setup.sh installs it)\n");
    return 77;
  }
  troupe::testing::etcd_servers server{1};
  troupe::runtime rt;
  std::vector<double> embedded, stored, takeovers;
  // Each kind goes first in every other round: neither gains from the other's warmed host.
  for (int round = 0; round < rounds; ++round) {
    auto embedded_round = [&] {
      embedded.push_back(
        calls_per_s(rt, "127.0.0.1:" + std::to_string(troupe::detail::free_loopback_port())));
    };
    auto store_round = [&] {
      stored.push_back(calls_per_s(rt, server.address() + "/calls-" + std::to_string(round)));
    };
    if (round % 2 == 0) {
      embedded_round();
      store_round();
    } else {
      store_round();
      embedded_round();
    }
  }
  takeovers.push_back(takeover_ms(rt, server.address() + "/takeover"));
  std::printf("world_embedded_calls_per_s %.0f calls/s\n", median(embedded));
  std::printf("world_store_calls_per_s %.0f calls/s\n", median(stored));
  std::printf("world_store_calls_ratio %.3f x\n", median(stored) / median(embedded));
  std::printf("world_takeover_ms %.0f ms\n", takeovers.front());
  return 0;
}

} // namespace troupe::bench
