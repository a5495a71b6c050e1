// Worlds that keep their tables in etcd (world_options::store), on 127.0.0.1, against real etcd
// servers the tests start (skipped where etcd is not installed): the world forms through the
// store and calls go member to member (etcd's own metrics count no request while they run);
// rank 0 killed, the others go on (calls, groups, barriers, keys) and rank 0 started again
// joins as a new incarnation; a member cut off from the store's quorum gets partition_error
// for everything and the others lose it, and once the store is back it joins again; one etcd
// server of three killed changes nothing; a store address that is wrong, out of reach, or a
// rank or name held is refused typed.
#include "../../eventually.hpp"
#include "../../tally_actor.hpp"
#include "../member_events.hpp"
#include "../world_test_support.hpp"
#include "etcd_servers.hpp"
#include "store/etcd_client.hpp"
#include "store_world_support.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <future>
#include <signal.h>

namespace troupe::testing {
namespace {

/// Requests the store's servers started for the world's tables: keepalives of leases and
/// watches (which stream, and reconnect when idle) aside.
double table_requests(const etcd_servers& servers) {
  double total = 0;
  for (const auto& [method, count] : servers.requests_started())
    if (method != "LeaseKeepAlive" && method != "Watch")
      total += count;
  return total;
}

/// The three members' round: a group of all three with a service of each, looked up and called
/// once (through the store), then calls and service calls only (none through the store);
/// `between` runs before those and after them, before any member leaves.
void serve_and_call(troupe::world& world, const std::function<void()>& between = {}) {
  auto group = world.create_rpc_group("all", everyone);
  group.register_service("twice-" + world.name(), [](int x) { return 2 * x; });
  group.barrier();
  for (const auto& other : everyone)
    require(group.registered_sync<int>("twice-" + other, 21) == 42, "a service by its key");
  group.barrier();
  if (between)
    between(); // the store is counted from here
  for (int i = 0; i < 100; ++i)
    for (const auto& other : everyone) {
      require(group.rpc_sync(other, add_numbers, i, 1) == i + 1, "a call member to member");
      require(group.registered_sync<int>("twice-" + other, i) == 2 * i, "a service call");
    }
  group.barrier();
  if (between)
    between(); // ... to here: no member has left yet (its record says so in the store)
  group.barrier();
}

TROUPE_ROLE(store_member) {
  return as_member([](troupe::world& world) { serve_and_call(world); });
}

TEST_F(world_on_store, forms_through_the_store_and_calls_touch_it_not) {
  etcd_servers servers{1};
  const auto store = servers.address() + "/forms";
  member_process zero{"store_member", store_environment(0, 3, store)};
  member_process two{"store_member", store_environment(2, 3, store)};
  troupe::runtime rt;
  troupe::world world{rt, store_options(1, 3, store)};
  EXPECT_EQ(world.members(), everyone);
  EXPECT_EQ(world.member_name(0), "0");
  std::vector<double> counted;
  serve_and_call(world, [&] { counted.push_back(table_requests(servers)); });
  ASSERT_EQ(counted.size(), 2u);
  EXPECT_GT(counted[0], 0) << "the members claimed, read and looked up through the store";
  EXPECT_EQ(counted[1], counted[0])
    << "300 calls and 300 service calls from each member asked the store nothing";
  EXPECT_EQ(zero.exit_code(20s), 0);
  EXPECT_EQ(two.exit_code(20s), 0);
}

/// Rank 0 of a world whose store keeps its tables: joins, meets the others and waits to be
/// killed (60 s at most).
TROUPE_ROLE(store_member_until_killed) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("all", everyone);
    group.pair("of-" + world.name(), 7);
    group.barrier();
    std::this_thread::sleep_for(60s);
  });
}

/// Member 2, beside the test's member 1: once rank 0 is lost, goes on with member 1 (a group, a
/// barrier, a group of all members, a service of member 1's), then waits for rank 0 to join
/// again and calls it.
TROUPE_ROLE(store_survivor) {
  return as_member([](troupe::world& world) {
    member_events events{world};
    auto group = world.create_rpc_group("all", everyone);
    group.barrier();
    require(events.wait_for("-0"), "member 2 sees rank 0 lost");
    auto pair = world.create_rpc_group("survivors", {"1", "2"});
    pair.barrier();
    require(pair.rpc_sync("1", add_numbers, 2, 3) == 5, "member 2 calls member 1");
    require(group.registered_sync<int>("twice-1", 4) == 8, "member 2 calls member 1's service");
    auto present = world.create_rpc_group("present", troupe::all_members);
    present.barrier();
    require(events.wait_for("+0", 30s), "member 2 sees rank 0 join again");
    require(present.rpc_sync("0", add_numbers, 1, 1) == 2, "member 2 calls the new rank 0");
    pair.barrier();
  });
}

/// Rank 0 started again after its loss: a new incarnation, taken in by the store.
TROUPE_ROLE(store_member_returns) {
  return as_member([](troupe::world& world) {
    require(world.rank() == 0 && world.members() == everyone, "rank 0 is back among three");
    auto present = world.create_rpc_group("present", troupe::all_members);
    require(present.rpc_sync("1", add_numbers, 20, 1) == 21, "the new rank 0 calls member 1");
    require(present.rpc_sync("2", add_numbers, 20, 2) == 22, "the new rank 0 calls member 2");
  });
}

/// A lookup of the value rank 0 paired before it was killed says it went with rank 0.
void expect_gone_with_rank_0(troupe::rpc_group& group) {
  try {
    (void)group.get_paired<int>("of-0");
    ADD_FAILURE() << "a value rank 0 paired outlived it";
  } catch (const troupe::peer_lost& e) {
    EXPECT_NE(std::string{e.what()}.find("went with its member: member '0' (rank 0) was lost"),
              std::string::npos)
      << e.what();
  }
}

TEST_F(world_on_store, rank_0_killed_the_others_go_on_and_it_joins_again) {
  world_of_three_on_store three{"survives", "store_member_until_killed", "store_survivor"};
  auto& world = three.world;
  auto& events = three.events;
  auto& zero = three.zero;
  auto group = world.create_rpc_group("all", everyone);
  group.register_service("twice-1", [](int x) { return 2 * x; });
  group.barrier();
  auto pending = group.rpc_async("0", sleep_ms, 8'000);
  auto phoenix = group.spawn<tally>("0", {.name = "phoenix", .restart = {.max_restarts = 1}}, 7);
  EXPECT_EQ(phoenix.call(&tally::pid).get(10s), zero.pid());

  zero.kill_and_collect(); // SIGKILL, and its inboxes unlinked once it is reaped
  ASSERT_TRUE(events.wait_for("-0")) << "rank 0's lease went, and with it rank 0";
  EXPECT_THROW(pending.get(), troupe::peer_lost) << "the call it was running failed";
  EXPECT_THROW(group.rpc_sync("0", add_numbers, 1, 1), troupe::peer_lost);
  EXPECT_EQ(world.members(), (std::vector<std::string>{"1", "2"}));
  auto pair = world.create_rpc_group("survivors", {"1", "2"});
  pair.barrier();
  EXPECT_EQ(pair.rpc_sync("2", add_numbers, 3, 4), 7);
  EXPECT_TRUE(group.is_registered("twice-1")); // the store holds it, not rank 0
  expect_gone_with_rank_0(group); // gone here, though its lease may not have expired yet
  EXPECT_THROW((void)group.get_paired<int>("never-paired"), troupe::key_error);
  auto present = world.create_rpc_group("present", troupe::all_members);
  present.barrier();
  EXPECT_TRUE(eventually([&] {
    try {
      return phoenix.call(&tally::pid).get(10s) == ::getpid();
    } catch (const troupe::worker_lost&) {
      return false; // the call met the lost member
    }
  }))
    << "rank 0's actor made again on member 1, the next there is";

  member_process again{"store_member_returns", store_environment(0, 3, three.store)};
  ASSERT_TRUE(events.wait_for("+0", 30s)) << "rank 0 joined again";
  EXPECT_EQ(world.members(), everyone);
  EXPECT_EQ(present.rpc_sync("0", add_numbers, 5, 5), 10);
  expect_gone_with_rank_0(group); // its lease went with its keys: the store's history says so
  EXPECT_EQ(again.exit_code(20s), 0);
  pair.barrier();
  EXPECT_EQ(three.two.exit_code(20s), 0);
}

/// A member joining the formed world at any rank while its coordinator is killed: its join
/// completes (exit 0), or fails typed (3: refused, 4: lost or timed out); then it calls member 1.
TROUPE_ROLE(store_joiner) {
  return refused_or_lost_code([] {
    (void)as_member([](troupe::world& world) {
      require(world.rank() == 3, "the joiner has the first free rank");
      auto pair = world.create_rpc_group("pair", {"1", "joiner"});
      require(pair.rpc_sync("1", add_numbers, 3, 3) == 6, "the joiner calls member 1");
      pair.barrier();
    });
  });
}

TEST_F(world_on_store, the_coordinator_killed_during_a_join_another_takes_over) {
  etcd_servers servers{1};
  const auto store = servers.address() + "/takeover";
  auto founder = [&](int rank) {
    auto environment = store_environment(rank, 3, store);
    environment["TROUPE_MAX_WORLD_SIZE"] = "4";
    return environment;
  };
  member_process zero{"store_member_until_killed", founder(0)};
  std::this_thread::sleep_for(1s); // it claims first: the oldest member, the coordinator
  member_process two{"store_member_until_killed", founder(2)};
  troupe::runtime rt;
  auto options = store_options(1, 3, store);
  options.max_world_size = 4;
  troupe::world world{rt, options};
  member_events events{world};
  auto group = world.create_rpc_group("all", everyone);
  group.barrier();

  auto joining = store_environment(0, 3, store);
  joining["TROUPE_RANK"] = "any";
  joining["TROUPE_NAME"] = "joiner";
  joining["TROUPE_MAX_WORLD_SIZE"] = "4";
  member_process joiner{"store_joiner", joining};
  zero.kill_and_collect(); // SIGKILL, and its inboxes unlinked once it is reaped
  ASSERT_TRUE(events.wait_for("+joiner", 20s)) << "the join completed";
  auto pair = world.create_rpc_group("pair", {"1", "joiner"}); // at the coordinator that took over
  EXPECT_EQ(pair.rpc_sync("joiner", add_numbers, 1, 2), 3);
  pair.barrier();
  EXPECT_EQ(joiner.exit_code(20s), 0);
  two.kill_and_collect();
}

/// Member 2 reaching only server 0 of the store, which the test kills: its lease goes, so it is
/// out of the world, and everything it waits on or asks fails with partition_error.
TROUPE_ROLE(store_member_cut_off) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("all", everyone);
    group.barrier();
    auto pending = group.rpc_async("0", sleep_ms, 8'000);
    auto expect_partition = [](const std::function<void()>& operation, const std::string& what) {
      try {
        operation();
        require(false, what + " fails");
      } catch (const troupe::partition_error&) {
      }
    };
    expect_partition([&] { (void)pending.get(); }, "the call of a member cut off");
    expect_partition([&] { (void)group.rpc_sync("0", add_numbers, 1, 1); }, "a new call");
    expect_partition([&] { (void)group.rpc_sync("2", add_numbers, 1, 1); }, "a call to itself");
    expect_partition([&] { (void)world.create_rpc_group("after", everyone); }, "a new group");
    expect_partition([&] { group.barrier(); }, "a barrier (met in shared memory here)");
    expect_partition([&] { group.register_service("late", [](int x) { return x; }); },
                     "a key taken");
  });
}

/// Member 1, reaching only server 0 as member 2 does, but joining again by itself
/// (TROUPE_REJOIN) once the store is back: then it calls rank 0.
TROUPE_ROLE(store_member_rejoins) {
  return as_member([](troupe::world& world) {
    member_events events{world}; // shares its record with the callbacks the world keeps
    auto group = world.create_rpc_group("all", everyone);
    group.barrier();
    require(events.wait_for("rejoined", 30s), "member 1 joined again once the store was back");
    auto again = world.create_rpc_group("again", {"0", "1"});
    require(again.rpc_sync("0", add_numbers, 2, 2) == 4, "member 1 calls rank 0 again");
    again.barrier();
  });
}

TEST_F(world_on_store, members_cut_off_from_the_store_fail_typed_and_join_again) {
  etcd_servers servers{3};
  const auto store = servers.address() + "/parts";
  const auto only_server_0 = servers.address_of(0, "parts");
  auto rejoins = store_environment(1, 3, only_server_0);
  rejoins["TROUPE_REJOIN"] = "1";
  member_process one{"store_member_rejoins", rejoins};
  member_process two{"store_member_cut_off", store_environment(2, 3, only_server_0)};
  troupe::runtime rt;
  troupe::world world{rt, store_options(0, 3, store)};
  member_events events{world};
  auto group = world.create_rpc_group("all", everyone);
  group.barrier();

  servers.kill(0); // members 1 and 2 reach no other server; the other two keep the quorum
  ASSERT_TRUE(events.wait_for("-2")) << "member 2's lease expired for everyone";
  ASSERT_TRUE(events.wait_for("-1")) << "so did member 1's";
  EXPECT_EQ(world.members(), (std::vector<std::string>{"0"}));
  EXPECT_EQ(two.exit_code(20s), 0) << "member 2 saw partition_error for all it did";
  servers.restart(0);
  ASSERT_TRUE(events.wait_for("+1", 30s)) << "member 1 joined again";
  auto again = world.create_rpc_group("again", {"0", "1"});
  EXPECT_EQ(again.rpc_sync("1", add_numbers, 1, 1), 2);
  again.barrier();
  EXPECT_EQ(one.exit_code(30s), 0);
}

TEST_F(world_on_store, one_server_of_three_killed_changes_nothing) {
  etcd_servers servers{3};
  const auto store = servers.address() + "/steady";
  member_process zero{"store_member", store_environment(0, 3, store)};
  member_process two{"store_member", store_environment(2, 3, store)};
  troupe::runtime rt;
  troupe::world world{rt, store_options(1, 3, store)};
  member_events events{world};
  // The server every member talks to first goes before the keys are taken and looked up.
  servers.kill(0);
  serve_and_call(world);
  EXPECT_EQ(zero.exit_code(20s), 0);
  EXPECT_EQ(two.exit_code(20s), 0);
  EXPECT_FALSE(events.wait_for("-0", 0ms)) << "no member was lost";
}

TEST_F(world_on_store, a_wrong_store_address_is_refused_naming_it) {
  troupe::runtime rt;
  for (const auto* wrong : {"http://127.0.0.1:2379", "etcd://", "etcd://127.0.0.1",
                            "etcd://127.0.0.1:2379/a world", "etcd://127.0.0.1:99999"}) {
    try {
      troupe::world world{rt, store_options(0, 1, wrong)};
      ADD_FAILURE() << wrong << " was taken";
    } catch (const troupe::invalid_argument& e) {
      EXPECT_NE(std::string{e.what()}.find("world_options::store"), std::string::npos) << e.what();
    }
  }
}

TEST_F(world_on_store, a_store_out_of_reach_is_a_network_error_once_the_timeout_passed) {
  troupe::runtime rt;
  const auto nobody = "etcd://127.0.0.1:" + std::to_string(free_port());
  auto options = store_options(0, 1, nobody);
  options.timeout = 2s;
  try {
    troupe::world world{rt, options};
    ADD_FAILURE() << "a world formed without its store";
  } catch (const troupe::network_error& e) {
    EXPECT_NE(std::string{e.what()}.find("did not answer within 2 s"), std::string::npos)
      << e.what();
  }
}

TEST_F(world_on_store, a_member_waits_for_a_store_that_starts_after_it) {
  // A launcher may start the store beside the members: the claim waits for it, within the
  // world's timeout. The server is stopped before the member comes and started again on its
  // port after.
  etcd_servers servers{1};
  servers.kill(0);
  // The thread that starts the server again stays until the test ends: a server dies with the
  // thread that started it (PR_SET_PDEATHSIG follows the thread, not the process).
  std::promise<void> test_done;
  std::thread start_again{[&, done = test_done.get_future()] {
    std::this_thread::sleep_for(1500ms);
    servers.restart(0);
    done.wait();
  }};
  troupe::runtime rt;
  try {
    troupe::world world{rt, store_options(0, 1, servers.address() + "/late")};
    EXPECT_EQ(world.members(), (std::vector<std::string>{"0"}));
  } catch (const troupe::error& e) {
    ADD_FAILURE() << e.what();
  }
  test_done.set_value();
  start_again.join();
}

/// A founder of a world of two (of up to five): once the test's member "4" has joined, meets the
/// others in a group of all members, and serves until the test's member has tried the forged
/// one.
TROUPE_ROLE(store_member_beside_a_forgery) {
  return as_member([](troupe::world& world) {
    // Group "three" names member "4", which joins after the founders formed the world: a founder
    // that came to it first would be refused ("not a member of the world") and leave.
    member_events events{world};
    const auto members = world.members();
    require(std::find(members.begin(), members.end(), "4") != members.end() ||
              events.wait_for("+4"),
            "the test's member joined");
    auto everyone = world.create_rpc_group("everyone", troupe::all_members);
    auto three = world.create_rpc_group("three", {"0", "1", "4"});
    three.barrier(); // the test's member has tried "3"
  });
}

// The store is not trusted beyond what a member's handshake proves: a record written into it by
// another hand, naming a member "3" at member 1's address, is taken into the table (the store
// says so), but a connection there proves member 1's name, not "3"'s: a call to "3" fails
// typed, and member 1 is not taken for "3".
TEST_F(world_on_store, a_forged_record_reaches_no_member_its_address_names) {
  etcd_servers servers{1};
  const auto store = servers.address() + "/forged";
  auto founder = [&](int rank) {
    auto environment = store_environment(rank, 2, store);
    environment["TROUPE_MAX_WORLD_SIZE"] = "5";
    return environment;
  };
  member_process zero{"store_member_beside_a_forgery", founder(0)};
  member_process one{"store_member_beside_a_forgery", founder(1)};
  troupe::runtime rt;
  auto options = store_options(4, 2, store);
  options.max_world_size = 5;
  troupe::world world{rt, options}; // joins the world of two as rank 4
  member_events events{world};
  auto everyone = world.create_rpc_group("everyone", troupe::all_members);
  auto three = world.create_rpc_group("three", {"0", "1", "4"});

  troupe::detail::etcd::client etcd{{servers.endpoints(), nullptr, 2s}};
  const auto member_1 = etcd.get("/troupe/forged/members/0000001");
  ASSERT_TRUE(member_1);
  const auto address = nlohmann::json::parse(member_1->value).at("address").get<std::string>();
  etcd.put("/troupe/forged/members/0000003",
           nlohmann::json{
             {"name", "3"}, {"incarnation", "forged"}, {"address", address}, {"devices", {"cpu"}}}
             .dump());
  ASSERT_TRUE(events.wait_for("+3")) << "the store's record is taken into the table";
  // Rank 4 connects to the lower rank 3 itself: member 1 answers there, proving its own name.
  EXPECT_THROW(everyone.rpc_sync("3", 10s, add_numbers, 1, 1), troupe::peer_lost);
  EXPECT_EQ(everyone.rpc_sync("1", add_numbers, 2, 2), 4) << "member 1 is itself still";
  three.barrier();
  EXPECT_EQ(zero.exit_code(20s), 0);
  EXPECT_EQ(one.exit_code(20s), 0);
}

/// A member the store must refuse: exits 3 if refused with invalid_argument saying
/// TEST_REFUSAL, 1 if refused otherwise, 0 if taken.
TROUPE_ROLE(store_member_refused) {
  try {
    return as_member([](troupe::world&) {});
  } catch (const troupe::invalid_argument& e) {
    std::cerr << "refused: " << e.what() << "\n";
    return std::string{e.what()}.find(std::getenv("TEST_REFUSAL")) != std::string::npos ? 3 : 1;
  }
}

TEST_F(world_on_store, a_rank_or_a_name_held_is_refused_naming_the_holder) {
  etcd_servers servers{1};
  const auto store = servers.address() + "/held";
  troupe::runtime rt;
  auto options = store_options(0, 1, store);
  options.max_world_size = 4;
  troupe::world world{rt, options};
  EXPECT_EQ(world.members(), (std::vector<std::string>{"0"}));
  auto same_rank = store_environment(0, 1, store);
  same_rank["TROUPE_NAME"] = "other";
  same_rank["TROUPE_MAX_WORLD_SIZE"] = "4";
  same_rank["TEST_REFUSAL"] = "rank 0 is held in the world's store";
  member_process by_rank{"store_member_refused", same_rank};
  EXPECT_EQ(by_rank.exit_code(20s), 3);
  auto same_name = store_environment(1, 1, store);
  same_name["TROUPE_NAME"] = "0";
  same_name["TROUPE_MAX_WORLD_SIZE"] = "4";
  same_name["TEST_REFUSAL"] = "the name '0' is held in the world's store by rank 0";
  member_process by_name{"store_member_refused", same_name};
  EXPECT_EQ(by_name.exit_code(20s), 3);
  EXPECT_EQ(world.members(), (std::vector<std::string>{"0"})) << "neither was taken in";
}

} // namespace
} // namespace troupe::testing
