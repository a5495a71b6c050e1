// The hosts tests' members of a world that keeps its tables in etcd (world_options::store; a
// server on each of hosts 0-2, reached over TLS with the world's CA). The test script kills
// host 2's etcd server once every member is in (nothing changes for the world), then SIGKILLs
// rank 0, the oldest member and so the coordinator, while a member on a fourth host joins. The
// other two see rank 0 lost and go on without it: calls, a group made and met at its barrier
// (at the coordinator that took over), a service found by its key, an actor of rank 0's made
// again on member 1, a group of all members, which the joiner enters too. Gloo groups of the
// three, then of the two, all-reduce across the hosts: a store world has no rank 0 address
// (TROUPE_ADDRESS is empty), so each member finds the address the others reach it at, and the
// groups' shape checks meet at the coordinator. Rank 0 started again on its host joins as a new
// incarnation, and they call it.
#include "../world/member_events.hpp"
#include "host_roles.hpp"
#include "host_tasks.hpp"

#include "troupe/actors/actor.hpp"
#include "troupe/collectives/collective_group.hpp"
#include "troupe/world/rpc_group.hpp"

#include <cstdlib>
#include <thread>
#include <unistd.h>

namespace troupe::hosts {

namespace {

const std::vector<std::string> three{"0", "1", "2"};

/// Member 1: rank 0's actor, once rank 0 is lost, answers from here.
void actor_moves_here(troupe::actor<host_counter>& phoenix) {
  bool moved = false;
  for (int i = 0; i < 300 && !moved; ++i) {
    try {
      moved = phoenix.call(&host_counter::pid).get(20s) == ::getpid();
    } catch (const troupe::worker_lost&) {
      // the call met the lost member
    }
    if (!moved)
      std::this_thread::sleep_for(100ms);
  }
  require(moved, "rank 0's actor made again on member 1, the next there is");
  require(phoenix.call(&host_counter::get).get(20s) == 7, "from the same arguments");
}

/// A gloo group of world ranks `ranks` all-reduces across their hosts.
void all_reduce_among(troupe::world& world, const std::vector<int>& ranks) {
  auto group = troupe::create_collective_group(world, ranks, {.timeout = 30s});
  std::vector<float> t(1024, 1.0f);
  group->all_reduce(t);
  require(t.front() == static_cast<float>(ranks.size()) && t.back() == t.front(),
          "a gloo all_reduce summed " + std::to_string(ranks.size()) + " members across hosts");
}

/// A member that came after rank 0's loss (`who` in the checks) joins the group of all members,
/// calls members 1 and 2, and marks `done` once they are done.
void call_the_two_then_mark(troupe::world& world, const std::string& who, const std::string& done) {
  auto present = world.create_rpc_group("present", troupe::all_members);
  require(present.rpc_sync("1", host_add, 2, 2) == 4, who + " calls member 1");
  require(present.rpc_sync("2", host_add, 2, 3) == 5, who + " calls member 2");
  await_mark("done_1", 60s);
  await_mark("done_2", 60s);
  mark(done);
}

} // namespace

TROUPE_HOST_ROLE(store_world_member) {
  troupe::world world{rt, member_options()};
  troupe::testing::member_events events{world};
  const auto me = world.name();
  const auto other = me == "1" ? "2" : "1";
  require(world.members() == three, "three members, from the store");
  auto group = world.create_rpc_group("all", three);
  group.register_service("twice-" + me, [](int x) { return 2 * x; });
  std::optional<troupe::actor<host_counter>> phoenix;
  if (me == "1") {
    phoenix =
      group.spawn<host_counter>("0", {.name = "phoenix", .restart = {.max_restarts = 1}}, 7);
    require(phoenix->call(&host_counter::pid).get(20s) == group.rpc_sync("0", host_pid, 0),
            "the actor runs on rank 0");
  }
  all_reduce_among(world, {0, 1, 2});
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
  require(failure_of([&] { (void)group.rpc_sync("0", host_add, 1, 1); }, 10s) == "peer_lost",
          "a call to rank 0 fails with peer_lost");
  auto pair = world.create_rpc_group("survivors", {"1", "2"});
  pair.barrier();
  require(pair.rpc_sync(other, host_add, 2, 3) == 5, "the two call each other");
  all_reduce_among(world, {1, 2});
  require(group.registered_sync<int>(std::string{"twice-"} + other, 21) == 42,
          "a service found by its key in the store");
  if (phoenix)
    actor_moves_here(*phoenix);
  // A group of all members, made at the coordinator that took over (no barrier of it here: the
  // joiner, present by then or not, never meets at one).
  auto present = world.create_rpc_group("present", troupe::all_members);
  require(events.wait_for("+0", 60s), "rank 0 started again joins");
  require(present.rpc_sync("0", host_add, 4, 5) == 9, "the new rank 0 answers");
  require(events.wait_for("+joiner", 60s), "the member of the fourth host joined");
  require(present.rpc_sync("joiner", host_add, 5, 5) == 10, "the joiner answers");
  mark("done_" + me);
  await_mark("back_0", 60s);
  await_mark("joiner_done", 60s);
}

/// Rank 0 started again once the others saw it lost: a new incarnation.
TROUPE_HOST_ROLE(store_world_returns) {
  troupe::world world{rt, member_options()};
  require(world.rank() == 0, "rank 0 back");
  call_the_two_then_mark(world, "the new rank 0", "back_0");
}

/// A member on a fourth host that joins at any rank while rank 0, the coordinator, is killed:
/// its join completes, through the coordinator that takes over.
TROUPE_HOST_ROLE(store_world_joiner) {
  troupe::world world{rt, member_options()};
  require(world.rank() == 3, "the joiner has the first free rank");
  call_the_two_then_mark(world, "the joiner", "joiner_done");
}

} // namespace troupe::hosts
