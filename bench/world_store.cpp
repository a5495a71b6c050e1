// `world --store`: a world whose tables are in etcd (world_options::store) against the
// embedded one, with one etcd server this program starts on 127.0.0.1 (Debian's etcd-server).
//   world_store_calls_per_s / world_embedded_calls_per_s: rpc_sync from rank 0 to rank 1 of a
//     world of two, a world of each kind up at once (four processes) taking turns in slices of
//     100 ms, as this program tells their rank 0s; 11 rounds of 10 slices each (new processes
//     each round), medians. The store is not on a call's path, so they should be alike
//     (world_store_calls_ratio).
//   world_takeover_ms: a world of three through the store; the oldest member (the coordinator)
//     is SIGKILLed, and the time runs until the other two have created a group and met at its
//     barrier, which needs a coordinator (the store's lease TTL, 3 s, plus the watch).
#include "../tests/queues/process_support.hpp" // wait_for: a peer waited for with a deadline
#include "spawn_self.hpp"
#include "world_store_bench.hpp"

#include "../tests/world/store/etcd_servers.hpp"

#include "troupe/actors/network.hpp"
#include "troupe/world/world.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

constexpr int rounds = 11;
constexpr int slices_per_round = 10;
constexpr auto slice = 100ms;

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
  return troupe::testing::wait_for(pid, std::chrono::seconds{60}).value_or(-1);
}

std::vector<std::string> names(int size) {
  std::vector<std::string> all;
  for (int rank = 0; rank < size; ++rank)
    all.push_back(std::to_string(rank));
  return all;
}

/// What a slice of calls came to.
struct slice_calls {
  int calls = 0;
  double seconds = 0;
};

/// Calls to rank 1 of `group` for a slice.
slice_calls calls_for(troupe::rpc_group& group) {
  slice_calls made;
  const auto start = clock_type::now();
  while (clock_type::now() - start < slice)
    for (int i = 0; i < 20; ++i, ++made.calls)
      (void)group.rpc_sync("1", store_bench_next, i);
  made.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  return made;
}

/// Rank 0 of a world of two in a process of its own, making a slice of calls whenever this
/// program says so (a byte on its descriptor 3; the slice's figures come back on 4).
class slice_caller {
public:
  explicit slice_caller(const std::string& where) {
    int go[2], done[2];
    if (::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(done, O_CLOEXEC) != 0)
      std::abort();
    pid_ = spawn_self("TROUPE_BENCH_STORE_CALLER=" + where, {{3, go[0]}, {4, done[1]}});
    ::close(go[0]);
    ::close(done[1]);
    go_ = go[1];
    done_ = done[0];
  }
  slice_caller(const slice_caller&) = delete;
  slice_caller& operator=(const slice_caller&) = delete;
  /// Closing its descriptor 3 ends it.
  ~slice_caller() {
    ::close(go_);
    ::close(done_);
    exit_of(pid_);
  }
  /// A slice of calls, once its world has formed (an empty slice if the caller has died).
  slice_calls run_slice() {
    slice_calls made;
    const char go = 1;
    if (::write(go_, &go, 1) != 1 || ::read(done_, &made, sizeof made) != sizeof made)
      return {};
    return made;
  }

private:
  pid_t pid_ = -1;
  int go_ = -1;
  int done_ = -1;
};

/// Calls per second of each kind in a round: a world of two of each kind up at once (new
/// processes each round, so that no kind keeps a lucky placement), their rank 0s taking turns
/// slice by slice (each first in every other pair), so both meet the machine as it is at that
/// moment; after three slices of each not counted, while the processes settle.
void round_of_calls(const std::string& store, int round, std::vector<double>& embedded,
                    std::vector<double>& stored) {
  const auto address = "127.0.0.1:" + std::to_string(troupe::detail::free_loopback_port());
  const auto world = store + "-" + std::to_string(round);
  const auto embedded_other = start_member(1, 2, address);
  const auto stored_other = start_member(1, 2, world);
  {
    slice_caller plain{address};
    slice_caller on_store{world};
    for (int warm = 0; warm < 3; ++warm) {
      (void)plain.run_slice();
      (void)on_store.run_slice();
    }
    slice_calls of_plain, of_store;
    const auto add = [](slice_calls& total, slice_calls more) {
      total.calls += more.calls;
      total.seconds += more.seconds;
    };
    for (int turn = 0; turn < slices_per_round; ++turn) {
      if ((round + turn) % 2 == 0) {
        add(of_plain, plain.run_slice());
        add(of_store, on_store.run_slice());
      } else {
        add(of_store, on_store.run_slice());
        add(of_plain, plain.run_slice());
      }
    }
    embedded.push_back(of_plain.seconds > 0 ? of_plain.calls / of_plain.seconds : 0);
    stored.push_back(of_store.seconds > 0 ? of_store.calls / of_store.seconds : 0);
  }
  exit_of(embedded_other);
  exit_of(stored_other);
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

int slice_calls_member(const std::string& where) {
  troupe::runtime rt;
  troupe::world world{rt, options_of("0 2 " + where)};
  auto group = world.create_rpc_group("calls", names(2));
  char go = 0;
  while (::read(3, &go, 1) == 1) {
    const auto made = calls_for(group);
    if (::write(4, &made, sizeof made) != sizeof made)
      break;
  }
  group.barrier();
  return 0;
}

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
  std::vector<double> embedded, stored;
  for (int round = 0; round < rounds; ++round)
    round_of_calls(server.address() + "/calls", round, embedded, stored);
  const double takeover = takeover_ms(rt, server.address() + "/takeover");
  std::printf("world_embedded_calls_per_s %.0f calls/s\n", median(embedded));
  std::printf("world_store_calls_per_s %.0f calls/s\n", median(stored));
  std::printf("world_store_calls_ratio %.3f x\n", median(stored) / median(embedded));
  std::printf("world_takeover_ms %.0f ms\n", takeover);
  return 0;
}

} // namespace troupe::bench
