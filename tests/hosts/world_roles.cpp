// Worlds across hosts: calls, remote references, services, barriers and 64 MiB values; a
// member joining the formed world from a fourth host (and taking an actor restarted from a lost
// member); a host's link cut mid-call and
// mid-barrier, for good or (world_options::rejoin) until it comes back; calls over a slow,
// lossy link.
#include "host_roles.hpp"
#include "host_tasks.hpp"

#include "troupe/actors/actor.hpp"
#include "troupe/actors/error.hpp"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <thread>

TROUPE_TASK(host_sleep_ms, [](int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds{ms});
  return ms;
});
/// How many floats arrived, and the first plus the last.
TROUPE_TASK(host_checksum, [](std::vector<float> v) {
  return std::pair<std::size_t, float>{v.size(), v.empty() ? 0.0f : v.front() + v.back()};
});

namespace troupe::hosts {
namespace {

constexpr std::size_t floats_in_64_mib = std::size_t{16} << 20;

/// Members' request inboxes this process can see: on a host with a /dev/shm of its own
/// (testbed.sh), its own alone, so that calls to other hosts cross the network.
int request_inboxes_here() {
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator{"/dev/shm"}) {
    const auto name = entry.path().filename().string();
    found += name.starts_with("troupe.q.troupe.w.") && name.ends_with(".q"); // a queue's object
  }
  return found;
}

std::string next_of(const troupe::world& world) {
  return world.member_name((world.rank() + 1) % world.size());
}

/// Every member: 20 calls to the next, a remote reference, the next member's service, its
/// 64 MiB paired value fetched and sent back to it as an argument.
TROUPE_HOST_ROLE(world_ring) {
  troupe::world world{rt, member_options()};
  require(request_inboxes_here() == 1, "no other host's inbox is in reach (request inboxes: " +
                                         std::to_string(request_inboxes_here()) + ")");
  const int rank = world.rank(), next_rank = (rank + 1) % world.size();
  const auto next = next_of(world);
  auto group = world.create_rpc_group("ring", world.members());
  group.register_service("offset_" + world.name(), [rank](int x) { return x + 100 * rank; });
  group.pair("big_" + world.name(), std::vector<float>(floats_in_64_mib, rank + 1.0f));
  group.barrier();
  for (int i = 0; i < 20; ++i)
    require(group.rpc_sync(next, host_add, i, rank) == i + rank, "a call around the ring");
  require(group.remote(next, host_add, 2, 3).to_here() == 5, "a remote reference's value");
  require(group.registered_sync<int>("offset_" + next, 1) == 1 + 100 * next_rank,
          "the next member's service");
  const auto big = group.get_paired<std::vector<float>>("big_" + next).to_here(60s);
  require(big.size() == floats_in_64_mib && big.back() == next_rank + 1.0f,
          "the next member's 64 MiB value");
  const auto [count, ends] = group.rpc_sync(next, 60s, host_checksum, big);
  require(count == floats_in_64_mib && ends == 2 * (next_rank + 1.0f), "64 MiB as an argument");
  group.barrier(); // nobody leaves while another still calls it
}

/// How long `work` took.
template <class F>
std::chrono::milliseconds timed(F&& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start);
}

/// A member the cut left is lost for good: after the link is back, a call to it fails with
/// peer_lost at once (it does not rejoin, and nothing waits), saying so.
void expect_lost_after_restore(troupe::rpc_group& group, const std::string& member,
                               const std::string& says) {
  await_mark("restored", 60s);
  std::string how, text;
  const auto took = timed([&] {
    try {
      group.rpc_sync(member, 5s, host_add, 1, 1);
      how = "none";
    } catch (const troupe::peer_lost& e) {
      how = "peer_lost";
      text = e.what();
    } catch (const troupe::error& e) {
      how = e.what();
    }
  });
  require(how == "peer_lost", "a call to '" + member + "' after the link came back: " + how);
  require(text.find(says) != std::string::npos, "it says '" + says + "': " + text);
  require(took < 2s, "and it failed at once");
}

/// Host 2's link is cut (by the test, on mark "cut") while rank 0 waits on a call to it and
/// rank 1 waits in a barrier it is part of: both fail with peer_lost within the loss bound
/// (3 s of silence, plus a heartbeat), and ranks 0 and 1 go on between themselves.
TROUPE_HOST_ROLE(cut_call) {
  troupe::world world{rt, member_options()};
  auto all = world.create_rpc_group("all", world.members());
  const bool victim = world.rank() == 2;
  auto rest = victim ? std::optional<troupe::rpc_group>{}
                     : world.create_rpc_group("rest", {world.member_name(0), world.member_name(1)});
  all.barrier();
  if (victim) {
    std::string how = "none";
    for (int tries = 0; tries < 15 && (how == "none" || how == "timeout_error"); ++tries)
      how = failure_of([&] { all.rpc_sync("0", 2s, host_add, 1, 1); }, 30s);
    require(how == "peer_lost", "the cut-off member sees rank 0 lost: " + how);
    mark("lost_seen_by_2");
    expect_lost_after_restore(all, "1", "stays out: world_options::rejoin is off");
    return;
  }
  std::string how;
  std::chrono::milliseconds took{};
  if (world.rank() == 0) {
    auto call = all.rpc_async("2", host_sleep_ms, 20'000);
    mark("cut");
    took = timed([&] { how = failure_of([&] { call.get(); }, 30s); });
  } else {
    took = timed([&] { how = failure_of([&] { all.barrier(30s); }, 30s); });
  }
  require(how == "peer_lost", "waiting on the cut-off member ended with " + how);
  require(took < 10s, "within the loss bound (took " + std::to_string(took.count()) + " ms)");
  require(rest->rpc_sync(world.rank() == 0 ? "1" : "0", host_add, 2, 2) == 4,
          "the rest of the world goes on");
  rest->barrier(20s);
  mark("lost_seen_by_" + world.name());
  expect_lost_after_restore(all, "2", "was lost");
}

/// Waits up to `limit` for `done`, checked every 20 ms; whether it came.
template <class F>
bool within(std::chrono::milliseconds limit, F&& done) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(20ms);
  return done();
}

/// Host 2's link is cut for 5 s (by the test, on mark "cut") while rank 0 waits on a call to it
/// and it calls rank 0: both calls fail with peer_lost. Every member has world_options::rejoin:
/// once the link is back ("restored"), member 2 joins the world again by itself within 10 s,
/// and the three meet in a new group and call each other.
TROUPE_HOST_ROLE(cut_rejoin) {
  troupe::world world{rt, member_options()};
  auto rejoined = std::make_shared<std::atomic<int>>(0);
  world.on_rejoined([rejoined] { ++*rejoined; });
  const std::vector<std::string> everyone{"0", "1", "2"};
  auto all = world.create_rpc_group("all", everyone);
  all.barrier();
  if (world.rank() == 2) {
    std::string how = "none";
    for (int tries = 0; tries < 15 && (how == "none" || how == "timeout_error"); ++tries)
      how = failure_of([&] { all.rpc_sync("0", 2s, host_add, 1, 1); }, 30s);
    require(how == "peer_lost", "the cut-off member's calls to rank 0 fail: " + how);
  } else if (world.rank() == 0) {
    auto call = all.rpc_async("2", host_sleep_ms, 20'000);
    mark("cut");
    const auto how = failure_of([&] { call.get(); }, 30s);
    require(how == "peer_lost", "the call pending on the cut-off member: " + how);
  }
  await_mark("restored", 60s);
  // Member 2 sees itself back once told (on_rejoined runs once it is the new incarnation).
  const auto is_back = [&] {
    return world.members() == everyone && (world.rank() != 2 || *rejoined == 1);
  };
  const auto back = timed([&] { require(within(20s, is_back), "member 2 is back"); });
  require(back < 10s,
          "back within 10 s of the link (took " + std::to_string(back.count()) + " ms)");
  auto again = world.create_rpc_group("again", everyone);
  const int rank = world.rank();
  for (const auto& other : everyone)
    if (other != world.name())
      require(again.rpc_sync(other, host_add, rank, 10) == rank + 10, "a call to " + other);
  again.barrier(); // nobody leaves while another still calls it
}

/// Every host sends with 20 ms of delay and 1 % loss: answers are still right, and a call's
/// timeout is still honoured.
TROUPE_HOST_ROLE(slow_link) {
  troupe::world world{rt, member_options()};
  auto group = world.create_rpc_group("ring", world.members());
  const auto next = next_of(world);
  group.barrier();
  for (int i = 0; i < 50; ++i)
    require(group.rpc_sync(next, host_add, i, world.rank()) == i + world.rank(),
            "a call over a slow, lossy link");
  const auto big = std::vector<float>(std::size_t{1} << 20, 1.0f);
  require(group.rpc_sync(next, 60s, host_checksum, big).first == big.size(), "4 MiB over it");
  std::string how;
  const auto took =
    timed([&] { how = failure_of([&] { group.rpc_sync(next, 100ms, host_sleep_ms, 2000); }, 5s); });
  require(how == "timeout_error", "a call past its timeout: " + how);
  require(took < 1s,
          "the 100 ms timeout is honoured (took " + std::to_string(took.count()) + " ms)");
  group.barrier(30s);
}

/// The members of the world of three that member 3 joins once it has formed.
const std::vector<std::string> grown{"0", "1", "2", "3"};

/// Waits up to 60 s for the world's members to be `expected`.
void await_members(const troupe::world& world, const std::vector<std::string>& expected) {
  for (int i = 0; i < 3000 && world.members() != expected; ++i)
    std::this_thread::sleep_for(20ms);
  const auto listed = [](const std::vector<std::string>& names) {
    std::string text;
    for (const auto& name : names)
      text += (text.empty() ? "" : ",") + name;
    return text;
  };
  require(world.members() == expected, "the world's members are " + listed(expected) +
                                         " (they are " + listed(world.members()) + ")");
}

/// The members left once member 2 has gone, with member 3 that joined.
const std::vector<std::string> after_the_loss{"0", "1", "3"};

/// Rank 0: an actor made on member 2, restarted on member 3 (which joined from a fourth host)
/// once member 2 is lost.
void restart_on_the_joiner(troupe::rpc_group& group) {
  auto phoenix = group.spawn<host_counter>(
    "2", {.name = "phoenix", .restart = {.max_restarts = 1, .members = {"3"}}}, 7);
  require(phoenix.call(&host_counter::pid).get(20s) == group.rpc_sync("2", host_pid, 0),
          "the actor runs on member 2");
  group.barrier(); // member 2 goes now
  const auto joiner = group.rpc_sync("3", host_pid, 0);
  bool moved = false;
  for (int i = 0; i < 300 && !moved; ++i) {
    try {
      moved = phoenix.call(&host_counter::pid).get(20s) == joiner;
    } catch (const troupe::worker_lost&) {
      // the call met the lost member
    }
    if (!moved)
      std::this_thread::sleep_for(100ms);
  }
  require(moved, "the actor was made again on member 3, the one that joined");
  require(phoenix.call(&host_counter::get).get(20s) == 7, "from the same arguments");
}

/// Members 0 to 2, forming a world that takes up to four: each keeps a value under a key, calls
/// member 3 once it has joined from a fourth host; rank 0 makes an actor on member 2, which
/// then goes (a crash), and the actor is made again on member 3; 0 and 1 stay until 3 has left.
TROUPE_HOST_ROLE(world_grows) {
  troupe::world world{rt, member_options()};
  mark("formed_" + world.name());
  await_members(world, grown);
  require(world.size() == 4 && world.member_name(3) == "3", "member 3 is known by rank");
  auto group = world.create_rpc_group("grown", grown);
  group.pair("key_" + world.name(), 10 * world.rank());
  group.barrier(); // every key is there
  require(group.rpc_sync("3", host_add, world.rank(), 1) == world.rank() + 1,
          "a call to the member that joined");
  group.barrier(); // member 3 has called everyone and read their keys
  if (world.rank() == 0) {
    restart_on_the_joiner(group);
  } else {
    group.barrier(); // the actor runs on member 2
    if (world.rank() == 2)
      std::_Exit(0); // gone without a word, as a crashed host's member is
  }
  world.create_rpc_group("after", after_the_loss).barrier(); // the actor moved
  await_members(world, {"0", "1"});
}

/// Member 3, on a fourth host: joins the formed world, calls every member and reads its key,
/// is called, and leaves.
TROUPE_HOST_ROLE(joins_world) {
  for (const char* formed : {"formed_0", "formed_1", "formed_2"})
    await_mark(formed, 60s);
  troupe::world world{rt, member_options()};
  require(world.rank() == 3 && world.size() == 4 && world.members() == grown,
          "member 3 joined a world of four");
  auto group = world.create_rpc_group("grown", grown);
  group.pair("key_3", 30);
  group.barrier();
  for (int rank = 0; rank < 3; ++rank) {
    const auto name = std::to_string(rank);
    require(group.rpc_sync(name, host_add, 3, rank) == 3 + rank, "a call to member " + name);
    require(group.get_paired<int>("key_" + name).to_here(20s) == 10 * rank,
            "member " + name + "'s key");
  }
  group.barrier();
  group.barrier(); // the actor runs on member 2, which goes
  world.create_rpc_group("after", after_the_loss).barrier(); // it runs here now
}

} // namespace
} // namespace troupe::hosts
