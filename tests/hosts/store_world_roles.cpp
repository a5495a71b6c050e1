// The hosts tests' members of a world that keeps its tables in etcd (world_options::store; a
// server on each of three hosts, reached over TLS with the world's CA): the test script
// SIGKILLs rank 0 once every member is in; the other two see it lost, and go on without it
// (a group, a barrier, calls, a service found by its key, a group of all members); rank 0
// started again on its host joins as a new incarnation, and they call it.
#include "host_roles.hpp"

#include "troupe/world/rpc_group.hpp"

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

TROUPE_TASK(store_host_add, [](int a, int b) { return a + b; });

namespace troupe::hosts {

namespace {

const std::vector<std::string> three{"0", "1", "2"};

/// The world's joins ("+name") and losses ("-name"), for a member to wait on.
class member_events {
public:
  explicit member_events(troupe::world& world) {
    world.on_member_lost([this](const std::string& name, int) { add("-" + name); });
    world.on_member_joined([this](const std::string& name, int) { add("+" + name); });
  }
  bool wait_for(const std::string& event, std::chrono::seconds limit) {
    std::unique_lock lock{mutex_};
    return changed_.wait_for(lock, limit, [&] { return seen_.contains(event); });
  }

private:
  void add(const std::string& event) {
    std::scoped_lock lock{mutex_};
    seen_.insert(event);
    changed_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable changed_;
  std::set<std::string> seen_;
};

} // namespace

TROUPE_HOST_ROLE(store_world_member) {
  troupe::world world{rt, member_options()};
  member_events events{world};
  const auto me = world.name();
  const auto other = me == "1" ? "2" : "1";
  require(world.members() == three, "three members, from the store");
  auto group = world.create_rpc_group("all", three);
  group.register_service("twice-" + me, [](int x) { return 2 * x; });
  group.barrier();
  mark("in_" + me);
  if (me == "0") { // killed by the test script
    std::this_thread::sleep_for(120s);
    return;
  }
  require(events.wait_for("-0", 30s), "rank 0 lost, within its lease's TTL");
  mark("saw_loss_" + me);
  require(failure_of([&] { (void)group.rpc_sync("0", store_host_add, 1, 1); }, 10s) == "peer_lost",
          "a call to rank 0 fails with peer_lost");
  auto pair = world.create_rpc_group("survivors", {"1", "2"});
  pair.barrier();
  require(pair.rpc_sync(other, store_host_add, 2, 3) == 5, "the two call each other");
  require(group.registered_sync<int>(std::string{"twice-"} + other, 21) == 42,
          "a service found by its key in the store");
  auto present = world.create_rpc_group("present", troupe::all_members);
  present.barrier();
  require(events.wait_for("+0", 60s), "rank 0 started again joins");
  require(present.rpc_sync("0", store_host_add, 4, 5) == 9, "the new rank 0 answers");
  mark("done_" + me);
  await_mark("back_0", 60s);
}

TROUPE_HOST_ROLE(store_world_returns) {
  troupe::world world{rt, member_options()};
  require(world.rank() == 0 && world.members() == three, "rank 0 back among three");
  auto present = world.create_rpc_group("present", troupe::all_members);
  require(present.rpc_sync("1", store_host_add, 1, 2) == 3, "the new rank 0 calls member 1");
  require(present.rpc_sync("2", store_host_add, 1, 3) == 4, "the new rank 0 calls member 2");
  await_mark("done_1", 60s);
  await_mark("done_2", 60s);
  mark("back_0");
}

} // namespace troupe::hosts
