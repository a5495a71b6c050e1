// machin's test_world RPC cases, with 3 processes on 127.0.0.1: this test is member "0" and
// starts members "1" and "2", which play the same role.
#include "world_test_support.hpp"

#include "world_access.hpp"

#include "troupe/actors/actor_type.hpp"
#include "troupe/actors/tensor_serialization.hpp"

#include <unistd.h>

#include <xtensor/xrandom.hpp>

#include <filesystem>
#include <set>

TROUPE_TASK(echo_tensor, [](xt::xarray<float> t) { return t; });
TROUPE_TASK(scaled_pair, [](xt::xarray<double> a, xt::xarray<double> b, double k) {
  return std::pair{xt::xarray<double>(a * k), xt::xarray<double>(b * k)};
});
/// The task's own use of serialize: its bytes must stand on their own wherever they go.
namespace troupe::testing {
/// An actor whose calls carry tensors.
struct scaler {
  explicit scaler(float k) : k(k) {}
  xt::xarray<float> scaled(xt::xarray<float> t) const { return t * k; }
  float k;
};
TROUPE_ACTOR(scaler, float, &scaler::scaled);
} // namespace troupe::testing

TROUPE_TASK(encoded_here, [](xt::xarray<float> t) { return troupe::serialize(t); });
TROUPE_TASK(scale_stored,
            [](xt::xarray<float>& stored, float k) { return xt::xarray<float>(stored * k); });

namespace troupe::testing {
namespace {

std::string next_of(const troupe::world& world) {
  return std::to_string((world.rank() + 1) % world.size());
}

/// test_get_info and test_rpc_get_info.
void check_info(troupe::world& world) {
  require(world.size() == 3, "world size");
  require(world.name() == std::to_string(world.rank()), "name follows rank");
  require(world.members() == everyone, "members sorted");
  auto group = world.create_rpc_group("info", {"2", "0", "1"});
  require(group.size() == 3 && group.name() == "info", "group size and name");
  require(group.members() == everyone, "group members sorted");
  require(group.is_member("1") && !group.is_member("3"), "is_member");
  group.barrier();
}

/// Member 0 only (the others do not take part, so nothing here may wait for them).
void check_bad_calls(troupe::world& world, troupe::rpc_group& group) {
  const auto refuses = [](const char* what, auto&& call, auto expected) {
    try {
      call();
    } catch (const decltype(expected)&) {
      return;
    }
    require(false, what);
  };
  refuses(
    "a non-member target", [&] { group.rpc_sync("7", add_numbers, 1, 2); },
    troupe::invalid_argument{""});
  refuses(
    "a group without the caller",
    [&] {
      world.create_rpc_group("mine", {"1", "2"});
    },
    troupe::invalid_argument{""});
  refuses(
    "a group with strangers",
    [&] {
      world.create_rpc_group("ghosts", {"0", "9"});
    },
    troupe::invalid_argument{""});
  refuses(
    "a group created twice", [&] { world.create_rpc_group("group", everyone); },
    troupe::state_error{""});
  refuses(
    "a call past its timeout", [&] { group.rpc_sync("1", 200ms, sleep_ms, 1500); },
    troupe::timeout_error{""});
  require(group.rpc_sync("0", add_numbers, 2, 3) == 5, "a member may call itself");
}

/// test_rpc_sync, test_rpc_async, test_rpc_remote: each member calls the next one.
void check_calls(troupe::world& world) {
  auto group = world.create_rpc_group("group", everyone);
  if (world.rank() == 0)
    check_bad_calls(world, group);
  const auto to = next_of(world);
  require(group.rpc_sync(to, add_numbers, 1, 2) == 3, "rpc_sync");
  auto async = group.rpc_async(to, greet, std::string{"world"});
  require(async.get(10s) == "hello world", "rpc_async");
  auto kept = group.remote(to, add_numbers, 20, 22);
  require(kept.owner().find("'" + to + "'") != std::string::npos, "remote's owner");
  require(kept.to_here() == 42 && kept.to_here() == 42, "remote to_here, twice");
  try {
    group.rpc_sync(to, fail_with, std::string{"bad index"});
    require(false, "a task's exception comes back");
  } catch (const std::out_of_range& e) {
    require(std::string{e.what()} == "bad index", "the exception's message");
    require(troupe::origin_of(e) != nullptr, "the exception's origin");
  }
  group.barrier();
}

/// test_rpc_pair: member 0 pairs a counter; the others count it up to 20 through references.
void check_pairs(troupe::world& world, troupe::rpc_group& group) {
  if (world.rank() == 0) {
    group.pair("counter", counter{});
    try {
      group.pair("counter", counter{});
      require(false, "a duplicate pair is refused");
    } catch (const troupe::key_error& e) {
      require(std::string{e.what()}.find("already paired to group 'keys'") != std::string::npos,
              "duplicate pair message");
    }
  }
  group.barrier();
  require(group.is_paired("counter"), "is_paired");
  try {
    group.get_paired<std::string>("counter").to_here();
    require(false, "a paired value asked for as another type is refused");
  } catch (const troupe::invalid_argument& e) {
    require(std::string{e.what()}.find("counter") != std::string::npos,
            "the type error names the key");
  }
  if (world.rank() != 0)
    for (int i = 0; i < 10; ++i) {
      auto ref = group.get_paired<counter>("counter");
      if (i % 2 == 0)
        ref.rpc_sync(count_up);
      else
        ref.rpc_sync(10s, count_up); // every other one with a timeout
    }
  group.barrier();
  require(group.get_paired<counter>("counter").to_here().count == 20, "the counter reached 20");
  require(group.get_paired<counter>("counter").to_here(10s).count == 20, "to_here, timed");
  group.barrier();
  if (world.rank() == 0) {
    group.unpair("counter");
    try {
      group.unpair("counter");
      require(false, "unpairing twice is refused");
    } catch (const troupe::key_error& e) {
      require(std::string{e.what()}.find("not found on group 'keys'") != std::string::npos,
              "unknown key message");
    }
  }
  group.barrier();
  require(!group.is_paired("counter"), "unpaired");
  try {
    group.get_paired<counter>("counter");
    require(false, "an unknown key is refused");
  } catch (const troupe::key_error&) {
  }
}

/// test_rpc_register: member 0 offers a counter service; the others reach 21, 22, 23 through
/// registered_sync, registered_async and registered_remote, one after the other.
void check_services(troupe::world& world, troupe::rpc_group& group) {
  // Atomic: what orders the service's runs before the check below is the other members' calls
  // and barriers, which a race detector cannot follow across processes.
  std::atomic<int> served = 20;
  if (world.rank() == 0) {
    group.register_service("counter", [&served](int step) { return served += step; });
    group.register_service("slow", [](int ms) {
      std::this_thread::sleep_for(std::chrono::milliseconds{ms});
      return ms;
    });
    try {
      group.register_service("counter", [](int step) { return step; });
      require(false, "a duplicate service is refused");
    } catch (const troupe::key_error&) {
    }
  }
  group.barrier();
  require(group.is_registered("counter"), "is_registered");
  if (world.rank() == 1) {
    require(group.registered_sync<int>("counter", 1) == 21, "registered_sync");
    require(group.registered_async<int>("counter", 10s, 1).get() == 22, "registered_async");
    require(group.registered_remote<int>("counter", 10s, 1).to_here() == 23, "registered_remote");
    try {
      group.registered_sync<int>("slow", 200ms, 1500);
      require(false, "a service call past its timeout");
    } catch (const troupe::timeout_error&) {
    }
  }
  group.barrier();
  if (world.rank() == 0) {
    require(served == 23, "the service ran here");
    group.deregister("counter");
    group.deregister("slow");
  }
  group.barrier();
  require(!group.is_registered("counter"), "deregistered");
}

/// test_rpc_barrier: four rounds, the last two entered from two threads of each member at once.
void check_barriers(troupe::world& world) {
  auto group = world.create_rpc_group("barriers", everyone);
  group.barrier();
  group.barrier();
  std::thread other{[&] { group.barrier(); }};
  group.barrier();
  other.join();
  group.destroy();
  try {
    group.barrier();
    require(false, "a destroyed group refuses calls");
  } catch (const troupe::state_error&) {
  }
}

void all_cases(troupe::world& world) {
  check_info(world);
  check_calls(world);
  auto group = world.create_rpc_group("keys", everyone);
  check_pairs(world, group);
  check_services(world, group);
  check_barriers(world);
}

TROUPE_ROLE(rpc_member) { return as_member(all_cases); }

class world_rpc : public ::testing::Test {
protected:
  int port = free_port();
  std::vector<member_process> members = start_members("rpc_member", 3, port);
  troupe::runtime rt;
};

/// The shared-memory inboxes of the members of the world `world_id` names
/// ("troupe.q.troupe.w.<world>.<rank>.q|r"); other tests' worlds may run beside this one.
std::set<std::string> member_inboxes(const std::string& world_id) {
  const auto prefix = "troupe.q.troupe.w." + world_id + ".";
  std::set<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator{"/dev/shm"}) {
    const auto name = entry.path().filename().string();
    if (name.starts_with(prefix))
      found.insert(name.substr(name.size() - 4)); // ".0.q", ".2.r", ...
  }
  return found;
}

TEST_F(world_rpc, machin_test_world_cases_on_three_processes) {
  std::string world_id;
  {
    troupe::world world{rt, member_options(0, 3, port)};
    world_id = troupe::detail::world_access::core(world)->world_id;
    std::atomic<int> losses{0};
    world.on_member_lost([&losses](const std::string&, int) { ++losses; });
    // Members on one host call each other through shared-memory inboxes, two each (the others
    // make theirs as they learn the world's name, just after rank 0 has gathered them).
    const std::set<std::string> all_inboxes{".0.q", ".0.r", ".1.q", ".1.r", ".2.q", ".2.r"};
    for (int i = 0; i < 500 && member_inboxes(world_id) != all_inboxes; ++i)
      std::this_thread::sleep_for(10ms);
    EXPECT_EQ(member_inboxes(world_id), all_inboxes);
    EXPECT_NO_THROW(all_cases(world));
    expect_clean_exits(members);
    // They left on purpose: calls to them fail, and no loss is reported.
    world.create_rpc_group("alone", {"0"}).barrier();
    try {
      world.create_rpc_group("gone", everyone);
      ADD_FAILURE() << "a group with members who left was created";
    } catch (const troupe::peer_lost& e) {
      EXPECT_NE(std::string{e.what()}.find("has left the world"), std::string::npos) << e.what();
    }
    EXPECT_EQ(losses, 0);
    EXPECT_EQ(member_inboxes(world_id), (std::set<std::string>{".0.q", ".0.r"})) << "left behind";
  }
  EXPECT_TRUE(member_inboxes(world_id).empty()) << "left behind";
}

/// This process's shared-memory segments (troupe.seg.<pid>.*).
int own_segments() {
  const auto prefix = "troupe.seg." + std::to_string(getpid()) + ".";
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator{"/dev/shm"})
    found += entry.path().filename().string().starts_with(prefix) ? 1 : 0;
  return found;
}

TEST(world_shared_memory, large_tensors_go_both_ways_through_segments_and_leave_nothing) {
  troupe::runtime rt;
  const xt::xarray<float> big = xt::random::rand<float>({512, 512}); // 1 MiB
  const xt::xarray<double> a = xt::random::rand<double>({300, 100}), b = xt::ones<double>({7});
  for (const bool shared_memory : {true, false}) {
    SCOPED_TRACE(shared_memory ? "shared memory" : "TCP");
    auto options = member_options(0, 1, free_port());
    options.shared_memory = shared_memory;
    {
      troupe::world world{rt, options};
      auto group = world.create_rpc_group("tensors", {"0"});
      const int before = own_segments();
      EXPECT_EQ(group.rpc_sync("0", echo_tensor, big), big);
      // The arguments went into a segment of the callee's request inbox and the outcome into
      // one of the caller's reply inbox; each stays there as a spare for the next call.
      EXPECT_EQ(own_segments() - before, shared_memory ? 2 : 0);
      for (int i = 0; i < 3; ++i)
        EXPECT_EQ(group.rpc_sync("0", echo_tensor, big * float(i)), big * float(i));
      EXPECT_EQ(own_segments() - before, shared_memory ? 2 : 0) << "spares are reused";
      const auto [ka, kb] = group.rpc_async("0", scaled_pair, a, b, 2.0).get(10s);
      EXPECT_EQ(ka, a * 2.0);
      EXPECT_EQ(kb, b * 2.0);
      group.register_service("echo", [](xt::xarray<float> t) { return t; });
      EXPECT_EQ(group.registered_sync<xt::xarray<float>>("echo", big), big);
      group.pair("stored", big);
      EXPECT_EQ(group.get_paired<xt::xarray<float>>("stored").rpc_sync(scale_stored, 3.f),
                big * 3.f);
      EXPECT_EQ(group.get_paired<xt::xarray<float>>("stored").to_here(), big);
      EXPECT_EQ(group.remote("0", echo_tensor, big).to_here(), big) << "kept outcomes are inline";
    }
    EXPECT_EQ(own_segments(), 0) << "left behind";
  }
}

TEST(world_shared_memory, an_actors_calls_move_large_tensors_through_segments_both_ways) {
  troupe::runtime rt;
  const xt::xarray<float> big = xt::random::rand<float>({512, 512}); // 1 MiB
  for (const bool shared_memory : {true, false}) {
    SCOPED_TRACE(shared_memory ? "shared memory" : "TCP");
    auto options = member_options(0, 1, free_port());
    options.shared_memory = shared_memory;
    {
      troupe::world world{rt, options};
      auto group = world.create_rpc_group("actors", {"0"});
      auto scaler = group.spawn<troupe::testing::scaler>("0", {.name = "scaler"}, 2.f);
      const int before = own_segments();
      EXPECT_EQ(scaler.call(&troupe::testing::scaler::scaled, big).get(10s), big * 2.f);
      // As a task's: the arguments into a segment of the host's request inbox, the outcome into
      // one of the caller's reply inbox, each kept there as a spare.
      EXPECT_EQ(own_segments() - before, shared_memory ? 2 : 0);
      // Two calls in flight at once may each need a segment of their own both ways, if the
      // second is sent before the host has taken the first out of its inbox.
      auto queued = scaler.call(&troupe::testing::scaler::scaled, big * 3.f);
      EXPECT_EQ(scaler.call(&troupe::testing::scaler::scaled, big).get(10s), big * 2.f);
      EXPECT_EQ(queued.get(10s), big * 6.f);
      const int after_two_in_flight = own_segments();
      EXPECT_LE(after_two_in_flight - before, shared_memory ? 4 : 0);
      for (int i = 0; i < 3; ++i)
        EXPECT_EQ(scaler.call(&troupe::testing::scaler::scaled, big).get(10s), big * 2.f);
      EXPECT_EQ(own_segments(), after_two_in_flight) << "spares are reused";
    }
    EXPECT_EQ(own_segments(), 0) << "left behind";
  }
}

TEST(world_shared_memory, what_a_task_serializes_itself_holds_its_tensors) {
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 1, free_port())};
  auto group = world.create_rpc_group("inline", {"0"});
  const xt::xarray<float> big = xt::random::rand<float>({1 << 18});
  const auto bytes = group.rpc_sync("0", encoded_here, big);
  EXPECT_EQ(troupe::deserialize<xt::xarray<float>>(bytes), big)
    << "read here, with no shared memory to fetch from";
}

TEST(world_shared_memory, can_be_turned_off) {
  troupe::runtime rt;
  std::vector<std::string> world_ids;
  for (const bool shared_memory : {true, false}) {
    auto options = member_options(0, 1, free_port());
    options.shared_memory = shared_memory;
    troupe::world world{rt, options};
    world_ids.push_back(troupe::detail::world_access::core(world)->world_id);
    EXPECT_EQ(member_inboxes(world_ids.back()).size(), shared_memory ? 2u : 0u);
    EXPECT_EQ(world.create_rpc_group("self", {"0"}).rpc_sync("0", add_numbers, 2, 2), 4);
  }
  for (const auto& world_id : world_ids)
    EXPECT_TRUE(member_inboxes(world_id).empty());
}

TEST(world_tcp_calls, time_out_naming_the_member_and_a_late_answer_is_dropped) {
  troupe::runtime rt;
  auto options = member_options(0, 1, free_port());
  options.shared_memory = false; // calls to itself go through its member actor, as over TCP
  troupe::world world{rt, options};
  auto group = world.create_rpc_group("self", {"0"});
  try {
    group.rpc_sync("0", 200ms, sleep_ms, 600);
    ADD_FAILURE() << "a call past its timeout returned";
  } catch (const troupe::timeout_error& e) {
    EXPECT_NE(std::string{e.what()}.find("within 200 ms"), std::string::npos) << e.what();
    EXPECT_NE(std::string{e.what()}.find("'0'"), std::string::npos) << e.what();
  }
  // Answered after the timed-out call's late answer (600) comes: that one must settle nothing.
  auto later = group.rpc_async("0", sleep_ms, 700);
  EXPECT_EQ(later.get(5s), 700);
  EXPECT_EQ(group.rpc_sync("0", add_numbers, 2, 3), 5);
}

} // namespace
} // namespace troupe::testing
