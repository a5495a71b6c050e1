// How worlds grow: a world of 16, 64 and 256 processes on this host (this program is rank 0
// and starts the others as copies of itself). For each size: the time from starting the
// processes to rank 0's world constructor returning (formed), a call from every member to the
// next around the ring (with a timeout, so over the network layer rather than shared memory),
// the time of a barrier of everyone, the heartbeats a member sends (CAF beats once per
// connection every 200 ms, so a member's beats a second are five times its TCP connections,
// counted in its own process), and a join into the formed world: one more process joins it, and
// times its world constructor (reaching rank 0, which tells every member before it answers).
// Then what rank 0 serves alone: a group of every founder made at once, and key lookups from
// every member at once (world_group_creation_ms_N, world_key_lookups_per_s_N), and lookups of
// keys the members hold, which each member asks rank 0 once and then the key's owner
// (world_held_key_lookups_per_s_N).
// Beside the barrier, its floor: as many forked processes meeting along the same tree over Unix
// socket pairs, one blocking thread each (barrier_floor.hpp), run just before each world. The
// world's barriers meet in shared memory (all its members are on this host); with
// TROUPE_HOST_BARRIERS=0 in the environment, along the tree of their connections.
// With --grow [F] [N] (default 64 and 256), a world of F forms and grows to N by joins, each
// its own process, and then one more joins it, timed (world_join_ms_N). With --store, a world
// whose tables are in etcd against the embedded one (world_store.cpp).
#include "../tests/queues/process_support.hpp" // wait_for: a peer waited for with a deadline
#include "barrier_floor.hpp"
#include "spawn_self.hpp"
#include "world_store_bench.hpp"

#include "troupe/actors/network.hpp"
#include "troupe/world/world.hpp"

#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

/// Established TCP connections of this process (its descriptors' sockets that /proc/net/tcp
/// lists in state 01).
int established_connections() {
  std::set<std::string> inodes;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator{"/proc/self/fd", error}) {
    const auto target = std::filesystem::read_symlink(entry.path(), error).string();
    if (!error && target.rfind("socket:[", 0) == 0)
      inodes.insert(target.substr(8, target.size() - 9));
  }
  int count = 0;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in{table};
    std::string line, slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    std::getline(in, line);
    while (std::getline(in, line)) {
      std::istringstream fields{line};
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
        timeout >> inode;
      count += state == "01" && inodes.contains(inode);
    }
  }
  return count;
}

/// Whether a socket listens on TCP `port` here.
bool listening_on(int port) {
  char wanted[8];
  std::snprintf(wanted, sizeof wanted, ":%04X", port);
  std::ifstream in{"/proc/net/tcp"};
  std::string line, slot, local, remote, state;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::istringstream fields{line};
    fields >> slot >> local >> remote >> state;
    if (state == "0A" && local.ends_with(wanted))
      return true;
  }
  return false;
}

} // namespace

TROUPE_TASK(bench_next, [](int x) { return x + 1; });
TROUPE_TASK(bench_connections, [](int) { return established_connections(); });

namespace {
std::atomic<double> reported_join_ms{0};
}
/// The joiner reports how long its join took.
TROUPE_TASK(bench_report_join, [](double ms) {
  reported_join_ms = ms;
  return 0;
});

namespace {

troupe::world_options options_of(int rank, int size, int port) {
  troupe::world_options options;
  options.rank = rank;
  options.world_size = size;
  options.name = std::to_string(rank);
  options.address = "127.0.0.1:" + std::to_string(port);
  options.timeout = 300s;
  options.rpc_threads = 1;
  // TROUPE_HOST_BARRIERS=0 (which the members inherit) times the barriers along the tree.
  if (const char* host = std::getenv("TROUPE_HOST_BARRIERS"); host != nullptr)
    options.host_barriers = std::string_view{host} != "0";
  options.max_world_size = size + 1; // one joins once it has formed
  return options;
}

/// Everyone: a call to the next member, then the barriers rank 0 times, then one to end on.
void ring_and_barriers(troupe::world& world, int barriers) {
  auto group = world.create_rpc_group("ring", world.members());
  const auto next = world.member_name((world.rank() + 1) % world.size());
  if (group.rpc_sync(next, 60s, bench_next, world.rank()) != world.rank() + 1)
    throw std::runtime_error("a wrong answer around the ring");
  group.barrier();
  for (int i = 0; i < barriers; ++i)
    group.barrier();
}

constexpr int timed_barriers = 20;
constexpr int key_lookups = 20; // each member's, after the ring

/// Everyone, once the ring is done: a group of the world's first `size` members, made at once
/// and met at its first barrier, then each member looking a key nobody holds up `key_lookups`
/// times (rank 0 answers), and a barrier; then each member pairs a value and looks up the next
/// member's `key_lookups` times (the first asks rank 0, the others that member), and a barrier.
/// Rank 0 times each part (from the barrier before, which let everyone go at once), and counts
/// the CPU time its own process spent on the held keys' part: the share of the world's lookups
/// that stays with rank 0, whatever the machine's cores.
struct coordinator_costs {
  double creation_ms, lookups_per_s, held_lookups_per_s, held_lookups_rank0_cpu_ms;
};

/// This process's CPU time so far (all its threads), in ms.
double process_cpu_ms() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}
coordinator_costs group_and_lookups(troupe::world& world, int size) {
  std::vector<std::string> names;
  for (int rank = 0; rank < size; ++rank)
    names.push_back(world.member_name(rank));
  const auto start = clock_type::now(); // everyone was let go by the barrier before
  auto timed = world.create_rpc_group("timed", names);
  timed.barrier(); // everyone has the group: its first barrier is part of the figure
  const auto made = clock_type::now();
  for (int i = 0; i < key_lookups; ++i)
    if (timed.is_registered("absent"))
      throw std::runtime_error("a key nobody registered was found");
  timed.barrier();
  const auto looked_at = clock_type::now();
  const auto looked = std::chrono::duration<double>(looked_at - made).count();
  const int rank = world.rank();
  timed.pair("held " + std::to_string(rank), rank);
  timed.barrier();
  const auto paired = clock_type::now();
  const auto cpu_before = process_cpu_ms();
  const auto next = "held " + std::to_string((rank + 1) % size);
  for (int i = 0; i < key_lookups; ++i)
    if (!timed.is_paired(next))
      throw std::runtime_error("a key paired before the barrier was not found");
  timed.barrier();
  const auto held_looked = std::chrono::duration<double>(clock_type::now() - paired).count();
  return {std::chrono::duration<double, std::milli>(made - start).count(),
          size * key_lookups / looked, size * key_lookups / held_looked,
          process_cpu_ms() - cpu_before};
}

int member(const char* spec) {
  int rank = 0, size = 0, port = 0;
  if (std::sscanf(spec, "%d,%d,%d", &rank, &size, &port) != 3)
    return 2;
  troupe::runtime rt;
  troupe::world world{rt, options_of(rank, size, port)};
  ring_and_barriers(world, timed_barriers + 1); // the last: rank 0 has counted connections
  (void)group_and_lookups(world, size);
  return 0;
}

/// The options of a member of the world that forms with `founders` and grows to `size` by joins
/// (one more joins it then, timed).
troupe::world_options growing_options(int rank, int founders, int size, int port) {
  auto options = options_of(rank, founders, port);
  options.max_world_size = size + 1;
  return options;
}

/// The member of rank `size` that joins the formed world (of `founders` that grew to `size`, if
/// given): times its join, reports it to rank 0.
int joiner(const char* spec) {
  int size = 0, port = 0, founders = 0;
  if (std::sscanf(spec, "%d,%d,%d", &size, &port, &founders) < 2)
    return 2;
  troupe::runtime rt;
  const auto start = clock_type::now();
  troupe::world world{rt, founders > 0 ? growing_options(size, founders, size, port)
                                       : options_of(size, size, port)};
  const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
  auto group = world.create_rpc_group("join", {"0", world.name()});
  group.rpc_sync("0", bench_report_join, ms);
  group.barrier();
  return 0;
}

/// Rank 0: one more member joins `world` (of `size`; formed with `founders`, if it grew);
/// how long its join took, as it timed it.
double time_a_join(troupe::world& world, int size, int port, int founders = 0) {
  std::promise<void> joined;
  world.on_member_joined([&joined, size](const std::string&, int rank) {
    if (rank == size)
      joined.set_value();
  });
  const auto pid = troupe::bench::spawn_self("TROUPE_BENCH_JOINER=" + std::to_string(size) + "," +
                                             std::to_string(port) + "," + std::to_string(founders));
  if (joined.get_future().wait_for(120s) != std::future_status::ready)
    throw std::runtime_error("the joiner did not join within 120 s");
  auto group = world.create_rpc_group("join", {"0", std::to_string(size)});
  group.barrier(); // after its report
  if (troupe::testing::wait_for(pid, std::chrono::seconds{60}) != 0)
    throw std::runtime_error("the joiner failed");
  return reported_join_ms;
}

struct figures {
  double formation_ms, barrier_us, beats_per_s, join_ms;
  coordinator_costs coordinator;
};

figures run_world(int size) {
  const int port = troupe::detail::free_loopback_port();
  std::vector<pid_t> members;
  figures result{};
  {
    troupe::runtime rt;
    // Rank 0 listens first (in its constructor, on another thread): the members' own listeners
    // could otherwise take its port. The clock starts with the first member.
    clock_type::time_point formed_at;
    auto forming = std::async(std::launch::async, [&] {
      auto formed = std::make_unique<troupe::world>(rt, options_of(0, size, port));
      formed_at = clock_type::now();
      return formed;
    });
    // Rank 0 that failed before it listened says why at forming.get(), not by a wait for ever.
    while (!listening_on(port) && forming.wait_for(1ms) != std::future_status::ready) {
    }
    const auto start = clock_type::now();
    for (int rank = 1; rank < size; ++rank)
      members.push_back(troupe::bench::spawn_self("TROUPE_BENCH_WORLD=" + std::to_string(rank) +
                                                  "," + std::to_string(size) + "," +
                                                  std::to_string(port)));
    const auto formed = forming.get();
    auto& world = *formed;
    result.formation_ms = std::chrono::duration<double, std::milli>(formed_at - start).count();
    auto group = world.create_rpc_group("ring", world.members());
    if (group.rpc_sync("1", 60s, bench_next, 0) != 1)
      throw std::runtime_error("a wrong answer around the ring");
    group.barrier();
    const auto barriers_start = clock_type::now();
    for (int i = 0; i < timed_barriers; ++i)
      group.barrier();
    result.barrier_us =
      std::chrono::duration<double, std::micro>(clock_type::now() - barriers_start).count() /
      timed_barriers;
    double connections = 0;
    for (int rank = 1; rank < size; ++rank)
      connections += group.rpc_sync(world.member_name(rank), 60s, bench_connections, 0);
    result.beats_per_s = 5.0 * connections / (size - 1);
    result.join_ms = time_a_join(world, size, port);
    group.barrier();
    result.coordinator = group_and_lookups(world, size);
  }
  for (const auto pid : members)
    if (troupe::testing::wait_for(pid, std::chrono::seconds{60}) != 0)
      throw std::runtime_error("a member failed");
  return result;
}

} // namespace

/// A member of the growing world (a founder, or one that joins it): stays until rank 0 has left,
/// watching its own tables, so that waiting costs rank 0 nothing.
int growing_member(const char* spec) {
  int rank = 0, founders = 0, size = 0, port = 0;
  if (std::sscanf(spec, "%d,%d,%d,%d", &rank, &founders, &size, &port) != 4)
    return 2;
  troupe::runtime rt;
  troupe::world world{rt, growing_options(rank, founders, size, port)};
  while (!world.members().empty() && world.members().front() == "0")
    std::this_thread::sleep_for(100ms);
  return 0;
}

constexpr int joiners_a_wave = 4;

/// Waits until `world` has `size` members; throws if one of `members` died first, or after 120 s.
void await_members(troupe::world& world, int size, const std::vector<pid_t>& members) {
  const auto until = clock_type::now() + 120s;
  while (world.size() < size) {
    for (const auto pid : members)
      if (int status = 0; ::waitpid(pid, &status, WNOHANG) == pid)
        throw std::runtime_error("a member of the growing world ended before it was in");
    if (clock_type::now() > until)
      throw std::runtime_error("the world did not grow to " + std::to_string(size) +
                               " within 120 s");
    std::this_thread::sleep_for(10ms);
  }
}

/// A world of `founders` that grows to `size` by joins, each started as its own process, in
/// waves (ranks founders..size-1); then one more joins it, timed. Returns how long the
/// growth took (the first joiner started to the last taken in) and that join.
std::pair<double, double> grow_world(int founders, int size) {
  const int port = troupe::detail::free_loopback_port();
  std::vector<pid_t> members;
  double growth_ms = 0, join_ms = 0;
  {
    troupe::runtime rt;
    auto forming = std::async(std::launch::async, [&] {
      return std::make_unique<troupe::world>(rt, growing_options(0, founders, size, port));
    });
    while (!listening_on(port) && forming.wait_for(1ms) != std::future_status::ready) {
    }
    const auto spec = [&](int rank) {
      return "TROUPE_BENCH_GROWING=" + std::to_string(rank) + "," + std::to_string(founders) + "," +
             std::to_string(size) + "," + std::to_string(port);
    };
    for (int rank = 1; rank < founders; ++rank)
      members.push_back(troupe::bench::spawn_self(spec(rank)));
    const auto formed = forming.get();
    auto& world = *formed;
    // In waves of 4, each taken in before the next starts: as a cluster's nodes come up, and
    // so that 192 processes starting at once on 2 cores do not outlast the joiners' 5 s grace
    // for reaching rank 0.
    const auto start = clock_type::now();
    for (int wave = founders; wave < size; wave += joiners_a_wave) {
      const int last = std::min(size, wave + joiners_a_wave);
      for (int rank = wave; rank < last; ++rank)
        members.push_back(troupe::bench::spawn_self(spec(rank)));
      await_members(world, last, members);
    }
    growth_ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
    join_ms = time_a_join(world, size, port, founders);
  }
  for (const auto pid : members)
    if (troupe::testing::wait_for(pid, std::chrono::seconds{60}) != 0)
      throw std::runtime_error("a member of the growing world failed");
  return {growth_ms, join_ms};
}

int main(int argc, char** argv) {
  if (const char* spec = std::getenv("TROUPE_BENCH_WORLD"))
    return member(spec);
  if (const char* spec = std::getenv("TROUPE_BENCH_JOINER"))
    return joiner(spec);
  if (const char* spec = std::getenv("TROUPE_BENCH_GROWING"))
    return growing_member(spec);
  if (const char* spec = std::getenv("TROUPE_BENCH_STORE_MEMBER"))
    return troupe::bench::store_member(spec);
  if (const char* where = std::getenv("TROUPE_BENCH_STORE_CALLER"))
    return troupe::bench::slice_calls_member(where);
  if (argc > 1 && std::string_view{argv[1]} == "--store")
    return troupe::bench::store_figures();
  if (argc > 1 && std::string_view{argv[1]} == "--grow") {
    const int founders = argc > 2 ? std::atoi(argv[2]) : 64;
    const int size = argc > 3 ? std::atoi(argv[3]) : 256;
    if (founders < 2 || size <= founders) {
      std::fprintf(stderr, "usage: world --grow [founders, at least 2; default 64] [size, more; "
                           "default 256]\n");
      return 2;
    }
    const auto [growth_ms, join_ms] = grow_world(founders, size);
    std::printf("world_growth_ms_%d_to_%d %.1f ms\n", founders, size, growth_ms);
    std::printf("world_join_ms_%d %.1f ms\n", size, join_ms);
    return 0;
  }
  std::vector<int> sizes{16, 64, 256};
  if (argc > 1) {
    const int size = std::atoi(argv[1]);
    if (size < 2) {
      std::fprintf(stderr, "usage: world [members, at least 2; default 16, 64 and 256]\n");
      return 2;
    }
    sizes = {size};
  }
  std::map<int, figures> results;
  for (int size : sizes) {
    // Before the world: forked while this process has no runtime's threads.
    const double floor_us = troupe::bench::socket_tree_barrier_us(size, timed_barriers);
    results[size] = run_world(size);
    std::printf("world_formation_ms_%d %.1f ms\n", size, results[size].formation_ms);
    std::printf("world_barrier_us_%d %.1f us\n", size, results[size].barrier_us);
    std::printf("world_barrier_floor_us_%d %.1f us\n", size, floor_us);
    std::printf("world_barrier_ratio_to_floor_%d %.2f x\n", size,
                results[size].barrier_us / floor_us);
    std::printf("world_heartbeat_msgs_per_s_%d %.1f msgs/s\n", size, results[size].beats_per_s);
    std::printf("world_join_ms_%d %.1f ms\n", size, results[size].join_ms);
    std::printf("world_group_creation_ms_%d %.1f ms\n", size,
                results[size].coordinator.creation_ms);
    std::printf("world_key_lookups_per_s_%d %.0f lookups/s\n", size,
                results[size].coordinator.lookups_per_s);
    std::printf("world_held_key_lookups_per_s_%d %.0f lookups/s\n", size,
                results[size].coordinator.held_lookups_per_s);
    std::printf("world_held_key_lookups_rank0_cpu_ms_%d %.1f ms\n", size,
                results[size].coordinator.held_lookups_rank0_cpu_ms);
    std::fflush(stdout);
  }
  if (results.contains(16) && results.contains(64))
    std::printf("world_formation_growth_4x %.2f x\n",
                results[64].formation_ms / results[16].formation_ms);
  return 0;
}
