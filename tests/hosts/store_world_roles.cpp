// The hosts tests' members of a world that keeps its tables in etcd (world_options::store; a
// server on each of hosts 0-2, reached over TLS with the world's CA). The test script kills
// host 2's etcd server once every member is in (nothing changes for the world), then SIGKILLs
// rank 0, the oldest member and so the coordinator, while a member on a fourth host joins. The
// other two see rank 0 lost and go on without it: calls, a group made and met at its barrier
// (at the coordinator that took over), a service found by its key, an actor of rank 0's made
// again on member 1, a group of all members, which the joiner enters too. Rank 0 started again
// on its host joins as a new incarnation, and they call it.
#include "host_roles.hpp"

#include "troupe/actors/actor.hpp"
#include "troupe/world/rpc_group.hpp"

#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>

/// An actor made on rank 0 before it is killed, and made again on the next member.
struct store_host_counter {
  explicit store_host_counter(int start) : n(start) {}
  int get() const { return n; }
  int pid() const { return ::getpid(); }
  int n;
};
TROUPE_ACTOR(store_host_counter, int, &store_host_counter::get, &store_host_counter::pid);
TROUPE_TASK(store_host_add, [](int a, int b) { return a + b; });
TROUPE_TASK(store_host_pid, [](int) { return static_cast<int>(::getpid()); });

namespace troupe::hosts {

namespace {

const std::vector<std::string> three{"0", "1", "2"};

/// The world's joins ("+name") and losses ("-name"), for a member to wait on.
class member_events {
public:
  explicit member_events(troupe::world& world) {
    // The callbacks keep the record alive: the world may outlive this object (its callbacks
    // run until it has stopped).
    world.on_member_lost([seen = seen_](const std::string& name, int) { seen->add("-" + name); });
    world.on_member_joined([seen = seen_](const std::string& name, int) { seen->add("+" + name); });
  }
  bool wait_for(const std::string& event, std::chrono::seconds limit) {
    std::unique_lock lock{seen_->mutex};
    return seen_->changed.wait_for(lock, limit, [&] { return seen_->seen.contains(event); });
  }

private:
  struct record {
    void add(const std::string& event) {
      std::scoped_lock lock{mutex};
      seen.insert(event);
      changed.notify_all();
    }
    std::mutex mutex;
    std::condition_variable changed;
    std::set<std::string> seen;
  };
  std::shared_ptr<record> seen_ = std::make_shared<record>();
};

/// Member 1: rank 0's actor, once rank 0 is lost, answers from here.
void actor_moves_here(troupe::actor<store_host_counter>& phoenix) {
  bool moved = false;
  for (int i = 0; i < 300 && !moved; ++i) {
    try {
      moved = phoenix.call(&store_host_counter::pid).get(20s) == ::getpid();
    } catch (const troupe::worker_lost&) {
      // the call met the lost member
    }
    if (!moved)
      std::this_thread::sleep_for(100ms);
  }
  require(moved, "rank 0's actor made again on member 1, the next there is");
  require(phoenix.call(&store_host_counter::get).get(20s) == 7, "from the same arguments");
}

} // namespace

TROUPE_HOST_ROLE(store_world_member) {
  troupe::world world{rt, member_options()};
  member_events events{world};
  const auto me = world.name();
  const auto other = me == "1" ? "2" : "1";
  require(world.members() == three, "three members, from the store");
  auto group = world.create_rpc_group("all", three);
  group.register_service("twice-" + me, [](int x) { return 2 * x; });
  std::optional<troupe::actor<store_host_counter>> phoenix;
  if (me == "1") {
    phoenix =
      group.spawn<store_host_counter>("0", {.name = "phoenix", .restart = {.max_restarts = 1}}, 7);
    require(phoenix->call(&store_host_counter::pid).get(20s) ==
              group.rpc_sync("0", store_host_pid, 0),
            "the actor runs on rank 0");
  }
  group.barrier();
  mark("in_" + me);
  await_mark("server_2_killed", 60s);
  group.barrier(); // one etcd server of three gone: nothing changes
  mark("still_" + me);
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
  if (phoenix)
    actor_moves_here(*phoenix);
  // A group of all members, made at the coordinator that took over (no barrier of it here: the
  // joiner, present by then or not, never meets at one).
  auto present = world.create_rpc_group("present", troupe::all_members);
  require(events.wait_for("+0", 60s), "rank 0 started again joins");
  require(present.rpc_sync("0", store_host_add, 4, 5) == 9, "the new rank 0 answers");
  require(events.wait_for("+joiner", 60s), "the member of the fourth host joined");
  require(present.rpc_sync("joiner", store_host_add, 5, 5) == 10, "the joiner answers");
  mark("done_" + me);
  await_mark("back_0", 60s);
  await_mark("joiner_done", 60s);
}

/// Rank 0 started again once the others saw it lost: a new incarnation.
TROUPE_HOST_ROLE(store_world_returns) {
  troupe::world world{rt, member_options()};
  require(world.rank() == 0, "rank 0 back");
  auto present = world.create_rpc_group("present", troupe::all_members);
  require(present.rpc_sync("1", store_host_add, 1, 2) == 3, "the new rank 0 calls member 1");
  require(present.rpc_sync("2", store_host_add, 1, 3) == 4, "the new rank 0 calls member 2");
  await_mark("done_1", 60s);
  await_mark("done_2", 60s);
  mark("back_0");
}

/// A member on a fourth host that joins at any rank while rank 0, the coordinator, is killed:
/// its join completes, through the coordinator that takes over.
TROUPE_HOST_ROLE(store_world_joiner) {
  troupe::world world{rt, member_options()};
  require(world.rank() == 3, "the joiner has the first free rank");
  auto present = world.create_rpc_group("present", troupe::all_members);
  require(present.rpc_sync("1", store_host_add, 2, 2) == 4, "the joiner calls member 1");
  require(present.rpc_sync("2", store_host_add, 2, 3) == 5, "the joiner calls member 2");
  await_mark("done_1", 60s);
  await_mark("done_2", 60s);
  mark("joiner_done");
}

} // namespace troupe::hosts
