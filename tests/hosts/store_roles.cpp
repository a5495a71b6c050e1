// The hosts tests' partition of a world that keeps its tables in etcd (world_options::store):
// five hosts, an etcd server on three of them (0, 1 and 3), a member of the world on each, all
// with world_options::rejoin. The test script cuts hosts 3 and 4 (one server among them) from
// the other three for at least 5 s: etcd's rule decides. The side of three, with the store's
// quorum, goes on: it sees the two lost, makes a group, meets at its barrier and calls within
// it. The two lose their leases: every group operation they make fails with partition_error,
// never a hang. Once the cut heals they join again as new incarnations, and all five meet in a
// new group and call each other.
#include "../world/member_events.hpp"
#include "host_roles.hpp"
#include "host_tasks.hpp"

#include "troupe/world/rpc_group.hpp"

#include <thread>

namespace troupe::hosts {

namespace {

using troupe::testing::member_events;

const std::vector<std::string> five{"0", "1", "2", "3", "4"};

/// A member on the side with the quorum: sees the two lost, goes on among the three.
void with_the_quorum(troupe::world& world, member_events& events) {
  const auto me = world.name();
  require(events.wait_for_all({"-3", "-4"}, 30s),
          "members 3 and 4 lost on the side with the quorum");
  mark("saw_cut_" + me);
  auto three = world.create_rpc_group("three", {"0", "1", "2"});
  three.barrier();
  for (const auto* other : {"0", "1", "2"})
    require(three.rpc_sync(other, host_add, 1, 2) == 3, "the three call each other");
}

/// A member cut off with one etcd server: its lease goes, and the world's operations it makes
/// fail with partition_error from then on (its old incarnation's), until it has joined again.
void cut_off(troupe::world& world, troupe::rpc_group& group) {
  const auto until = std::chrono::steady_clock::now() + 30s;
  bool partitioned = false;
  while (!partitioned && std::chrono::steady_clock::now() < until) {
    try {
      (void)group.is_registered("probe"); // asks the store: refused once the lease is gone
    } catch (const troupe::partition_error&) {
      partitioned = true;
    } catch (const troupe::error&) {
      std::this_thread::sleep_for(100ms); // the store out of reach, before the lease's end
    }
  }
  require(partitioned, "a key lookup fails with partition_error within 30 s of the cut");
  require(failure_of([&] { (void)group.rpc_sync("0", host_add, 1, 1); }, 5s) == "partition_error",
          "a call fails with partition_error");
  require(failure_of([&] { group.barrier(); }, 5s) == "partition_error",
          "a barrier fails with partition_error");
  mark("cut_off_" + world.name());
}

} // namespace

TROUPE_HOST_ROLE(store_member) {
  auto options = member_options();
  options.rejoin = true;
  troupe::world world{rt, options};
  member_events events{world};
  const auto me = world.name();
  auto group = world.create_rpc_group("all", five);
  group.barrier();
  mark("in_" + me);
  if (me == "3" || me == "4")
    cut_off(world, group);
  else
    with_the_quorum(world, events);
  await_mark("restored", 60s);
  if (me == "3" || me == "4")
    require(events.wait_for("rejoined", 60s), "joined again once the cut healed");
  else
    require(events.wait_for_all({"+3", "+4"}, 60s), "members 3 and 4 back as new incarnations");
  for (int i = 0; i < 3000 && world.members() != five; ++i) // the other one may come later
    std::this_thread::sleep_for(20ms);
  require(world.members() == five, "all five members again");
  auto again = world.create_rpc_group("again", five);
  again.barrier();
  for (const auto& other : five)
    require(again.rpc_sync(other, host_add, 2, 3) == 5, "all five call each other again");
  again.barrier();
}

} // namespace troupe::hosts
