// Members that join a formed world (world_options::max_world_size), on 127.0.0.1: the world
// forms with world_size members and takes joiners of the ranks above afterwards; every member
// learns of a joiner before the joiner hears from it, calls reach it both ways, it takes an
// actor restarted from a lost member, and it leaves as any member does. A lost member joins
// again as a new process under its name and rank; its old process is not taken back. A rank or name
// a member holds, or a world of another size, is refused naming what was wrong.
#include "world_test_support.hpp"

#include "../eventually.hpp"
#include "../process_usage.hpp"
#include "../tally_actor.hpp"

#include "troupe/actors/actor.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>

#include <set>
#include <signal.h>
#include <unistd.h>

TROUPE_TASK(process_id, [](int) { return static_cast<int>(getpid()); });

namespace troupe::testing {
namespace {

/// The members' names `on_member_joined` reported here, in order, and their ranks.
class join_recorder {
public:
  explicit join_recorder(troupe::world& world) {
    world.on_member_joined([this](const std::string& name, int rank) {
      std::lock_guard guard{mutex_};
      joined_.emplace_back(name, rank);
    });
  }
  /// Whether `name` has joined at `rank`, waiting up to 20 s for it.
  bool wait_for(const std::string& name, int rank) {
    for (int i = 0; i < 2000; ++i) {
      {
        std::lock_guard guard{mutex_};
        if (std::find(joined_.begin(), joined_.end(), std::pair{name, rank}) != joined_.end())
          return true;
      }
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

private:
  std::mutex mutex_;
  std::vector<std::pair<std::string, int>> joined_;
};

/// The members of the world in the tests below, with the joiner "2".
const std::vector<std::string> with_joiner{"0", "1", "2"};

/// Member 1 of a world of two that takes up to four: learns that "2" joined, calls it, meets it
/// at a barrier, and waits for it to leave. (Its callbacks are registered once the world has
/// formed, maybe after the join: it looks at the members instead.)
TROUPE_ROLE(stays_for_the_joiner) {
  return as_member([](troupe::world& world) {
    for (int i = 0; i < 2000 && world.members() != with_joiner; ++i)
      std::this_thread::sleep_for(10ms);
    require(world.members() == with_joiner, "member 1 lists the joiner");
    require(world.size() == 3 && world.member_name(2) == "2", "member 1 knows the joiner");
    auto group = world.create_rpc_group("with_joiner", with_joiner);
    require(group.rpc_sync("2", add_numbers, 2, 3) == 5, "member 1 calls the joiner");
    group.barrier();
    wait_until_gone(group, "2");
    // A call through the inboxes may see the joiner's go before the member actor has its
    // leave: the members follow a moment later.
    for (int i = 0; i < 2000 && world.members().size() != 2; ++i)
      std::this_thread::sleep_for(10ms);
    require(world.members() == (std::vector<std::string>{"0", "1"}), "the joiner has left");
  });
}

/// Member 2, joining the formed world: it is a member from its constructor on, calls the
/// others and is called, then leaves.
TROUPE_ROLE(joins_late) {
  return as_member([](troupe::world& world) {
    require(world.rank() == 2 && world.size() == 3, "the joiner has rank 2 of 3 members");
    require(world.members() == with_joiner, "the joiner lists every member");
    require(world.member_name(1) == "1", "the joiner knows member 1 by rank");
    auto group = world.create_rpc_group("with_joiner", with_joiner);
    require(group.rpc_sync("0", add_numbers, 1, 1) == 2, "the joiner calls rank 0");
    require(group.rpc_sync("1", greet, std::string{"joiner"}) == "hello joiner",
            "the joiner calls member 1");
    group.barrier();
  });
}

/// The environment of a member of the world of two members (up to four) on `port`.
std::map<std::string, std::string> elastic_environment(int rank, int port) {
  auto environment = member_environment(rank, 2, port);
  environment["TROUPE_MAX_WORLD_SIZE"] = "4";
  return environment;
}

TEST(world_joining, a_member_joins_the_formed_world_and_every_member_learns_of_it) {
  troupe::runtime rt;
  const int port = free_port();
  member_process member{"stays_for_the_joiner", elastic_environment(1, port)};
  auto options = member_options(0, 2, port);
  options.max_world_size = 4;
  troupe::world world{rt, options};
  join_recorder joins{world};
  EXPECT_EQ(world.size(), 2);
  EXPECT_EQ(world.members(), (std::vector<std::string>{"0", "1"}));
  EXPECT_THROW((void)world.member_name(2), troupe::invalid_argument) << "no member holds rank 2";

  member_process joiner{"joins_late", elastic_environment(2, port)};
  ASSERT_TRUE(joins.wait_for("2", 2)) << "rank 0 was told of the joiner";
  EXPECT_EQ(world.size(), 3);
  EXPECT_EQ(world.members(), with_joiner);
  EXPECT_EQ(world.member_name(2), "2");
  auto group = world.create_rpc_group("with_joiner", with_joiner);
  EXPECT_EQ(group.rpc_sync("2", add_numbers, 20, 22), 42);
  group.barrier();
  EXPECT_EQ(joiner.exit_code(20s), 0);
  EXPECT_EQ(member.exit_code(30s), 0);
  EXPECT_EQ(world.members(), std::vector<std::string>{"0"}) << "both have left";
  EXPECT_EQ(world.size(), 1);
}

/// Member 1 of a world of two: waits for "2" to join, makes the group of three, and hosts what
/// rank 0 spawns on it until the test kills it.
TROUPE_ROLE(hosts_until_killed) {
  return as_member([](troupe::world& world) {
    for (int i = 0; i < 2000 && world.members() != with_joiner; ++i)
      std::this_thread::sleep_for(10ms);
    auto group = world.create_rpc_group("grown", with_joiner);
    std::this_thread::sleep_for(60s);
  });
}

/// Member 2, joining the formed world: makes the group of three and serves until rank 0 leaves.
TROUPE_ROLE(joins_and_serves) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("grown", with_joiner);
    wait_until_gone(group, "0");
  });
}

// An actor whose member is lost is made again on the next member of its group: one that joined
// the formed world takes it as any other would.
TEST(world_joining, a_member_that_joined_takes_a_restarted_actor) {
  troupe::runtime rt;
  const int port = free_port();
  member_process host{"hosts_until_killed", elastic_environment(1, port)};
  auto options = member_options(0, 2, port);
  options.max_world_size = 4;
  troupe::world world{rt, options};
  join_recorder joins{world};
  member_process joiner{"joins_and_serves", elastic_environment(2, port)};
  ASSERT_TRUE(joins.wait_for("2", 2));
  auto group = world.create_rpc_group("grown", with_joiner);
  auto a = group.spawn<tally>("1", {.name = "phoenix", .restart = {.max_restarts = 1}}, 100);
  EXPECT_EQ(a.call(&tally::add, 5).get(10s), 105);
  EXPECT_EQ(a.call(&tally::pid).get(10s), host.pid());
  host.kill_and_collect();
  ASSERT_TRUE(eventually([&] {
    try {
      return a.call(&tally::pid).get(10s) == joiner.pid();
    } catch (const troupe::worker_lost&) {
      return false; // the call met the lost member
    }
  }))
    << "made again on the member that joined, the next after the lost one";
  EXPECT_EQ(a.call(&tally::get).get(10s), 100) << "from the same arguments";
  world.stop();
  EXPECT_EQ(joiner.exit_code(20s), 0);
}

/// Member 2 of three, frozen by the test and then resumed, as a new process took its place:
/// once resumed, its calls fail with peer_lost (it was lost to the world, which does not take
/// it back); exits 0 then, 1 if they still succeed after 60 s.
TROUPE_ROLE(frozen_then_resumed) {
  return refused_or_lost_code([] {
    as_member([](troupe::world& world) {
      auto group = world.create_rpc_group("all", everyone);
      group.barrier();
      for (int i = 0; i < 600; ++i) {
        try {
          group.rpc_sync("0", 2s, add_numbers, 1, 1);
        } catch (const troupe::peer_lost&) {
          return;
        } catch (const troupe::timeout_error&) {
        }
        std::this_thread::sleep_for(100ms);
      }
      require(false, "the old process was cut off");
    });
  });
}

/// Member 2 again, a new process under its old name and rank: serves until rank 0 leaves.
TROUPE_ROLE(returns_under_its_name) {
  return as_member([](troupe::world& world) {
    require(world.rank() == 2 && world.members() == everyone, "back in a world of three");
    auto group = world.create_rpc_group("again", everyone);
    group.barrier();
    wait_until_gone(group, "0");
  });
}

/// Member 1: hears member 2 lost, then back, calls the new one, and serves until rank 0 leaves.
/// It listens rather than polls the world's size: on a loaded machine the loss and the return
/// may reach it one right after the other, between two looks.
TROUPE_ROLE(sees_a_member_return) {
  return as_member([](troupe::world& world) {
    auto lost = std::make_shared<std::atomic<bool>>(false);
    world.on_member_lost([lost](const std::string& name, int) { *lost = *lost || name == "2"; });
    join_recorder joins{world};
    auto group = world.create_rpc_group("all", everyone);
    group.barrier();
    for (int i = 0; i < 3000 && !*lost; ++i)
      std::this_thread::sleep_for(10ms);
    require(*lost, "member 2 was lost");
    require(joins.wait_for("2", 2), "member 2 is back");
    require(world.members() == everyone, "member 2 is back among the members");
    auto again = world.create_rpc_group("again", everyone);
    require(again.rpc_sync("2", add_numbers, 2, 2) == 4, "a call to the new member 2");
    again.barrier();
    wait_until_gone(again, "0");
    world.stop(); // before the join recorder goes
  });
}

// A member lost (frozen past the 3 s bound) may join again under its old name and rank as a new
// process: calls pending on the old one failed with peer_lost, as did a group naming it, which
// is made once it is back; the new one is called as any member, and the old one, resumed, is
// not taken for it.
TEST(world_joining, a_lost_member_joins_again_as_a_new_process_and_its_old_one_is_refused) {
  troupe::runtime rt;
  const int port = free_port();
  member_process one{"sees_a_member_return", member_environment(1, 3, port)};
  member_process old{"frozen_then_resumed", member_environment(2, 3, port)};
  troupe::world world{rt, member_options(0, 3, port)};
  std::atomic<bool> lost{false};
  world.on_member_lost([&lost](const std::string& name, int) { lost = lost || name == "2"; });
  join_recorder joins{world};
  auto all = world.create_rpc_group("all", everyone);
  all.barrier();
  // Long enough to be pending when the loss is seen (3 s), short enough not to hold the old
  // process's exit for long once it resumes (it finishes the call first).
  auto pending = all.rpc_async("2", sleep_ms, 5'000);
  old.signal(SIGSTOP);
  EXPECT_THROW(pending.get(), troupe::peer_lost) << "the call pending on the old process";
  for (int i = 0; i < 1000 && !lost; ++i) // the callbacks run once the pending calls failed
    std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(lost.load());
  EXPECT_EQ(world.members(), (std::vector<std::string>{"0", "1"}));
  // A group naming it fails while it is gone, and is made once it is back (below).
  EXPECT_THROW((void)world.create_rpc_group("again", everyone, 10s), troupe::peer_lost);

  member_process again{"returns_under_its_name", member_environment(2, 3, port)};
  ASSERT_TRUE(joins.wait_for("2", 2)) << "member 2 joined again";
  EXPECT_EQ(world.members(), everyone);
  auto group = world.create_rpc_group("again", everyone);
  EXPECT_EQ(group.rpc_sync("2", process_id, 0), again.pid());
  old.signal(SIGCONT);
  EXPECT_EQ(old.exit_code(30s), 0) << "the resumed old process was cut off";
  EXPECT_EQ(group.rpc_sync("2", process_id, 0), again.pid()) << "still the new process";
  group.barrier();
  world.stop();
  EXPECT_EQ(one.exit_code(20s), 0);
  EXPECT_EQ(again.exit_code(20s), 0);
}

/// Member 2 of three, with world_options::rejoin: frozen by the test past the loss bound and
/// resumed, it finds itself cut off, joins again by itself (on_rejoined), its old group refusing
/// calls as made in its earlier incarnation, and serves in a new one until rank 0 leaves.
TROUPE_ROLE(rejoins_by_itself) {
  return as_member([](troupe::world& world) {
    auto rejoined = std::make_shared<std::atomic<int>>(0);
    world.on_rejoined([rejoined] { ++*rejoined; });
    auto all = world.create_rpc_group("all", everyone);
    all.barrier(); // frozen from here, then resumed
    for (int i = 0; i < 6000 && *rejoined == 0; ++i)
      std::this_thread::sleep_for(10ms);
    require(*rejoined == 1, "on_rejoined was called once");
    require(world.members() == everyone, "back in a world of three");
    try {
      all.rpc_sync("0", add_numbers, 1, 1);
      require(false, "a call through the group of the earlier incarnation went out");
    } catch (const troupe::state_error& e) {
      require(std::string{e.what()}.find("earlier incarnation") != std::string::npos,
              std::string{"the old group says why: "} + e.what());
    }
    auto again = world.create_rpc_group("again", everyone);
    require(again.rpc_sync("0", add_numbers, 2, 3) == 5, "a call to rank 0 after the rejoin");
    again.barrier();
    wait_until_gone(again, "0");
  });
}

// With world_options::rejoin, a member cut off from the world (here frozen past the 3 s bound,
// so that rank 0 drops it and, resumed, it finds rank 0 gone) joins again by itself under its
// name and rank: the same process as a new incarnation, which the others take as a member that
// joined again. The call pending on it when it was lost failed with peer_lost.
TEST(world_joining, a_member_cut_off_with_rejoin_joins_again_by_itself_under_its_name) {
  troupe::runtime rt;
  const int port = free_port();
  member_process one{"sees_a_member_return", member_environment(1, 3, port)};
  auto rejoining = member_environment(2, 3, port);
  rejoining["TROUPE_REJOIN"] = "1";
  member_process two{"rejoins_by_itself", rejoining};
  troupe::world world{rt, member_options(0, 3, port)};
  std::atomic<bool> lost{false};
  world.on_member_lost([&lost](const std::string& name, int) { lost = lost || name == "2"; });
  join_recorder joins{world};
  auto all = world.create_rpc_group("all", everyone);
  all.barrier();
  auto pending = all.rpc_async("2", sleep_ms, 5'000);
  two.signal(SIGSTOP);
  EXPECT_THROW(pending.get(), troupe::peer_lost) << "the call pending on the cut-off member";
  for (int i = 0; i < 1000 && !lost; ++i)
    std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(lost.load());
  EXPECT_EQ(world.members(), (std::vector<std::string>{"0", "1"}));
  two.signal(SIGCONT);
  ASSERT_TRUE(joins.wait_for("2", 2)) << "member 2 joined again by itself";
  EXPECT_EQ(world.members(), everyone);
  auto again = world.create_rpc_group("again", everyone);
  EXPECT_EQ(again.rpc_sync("2", process_id, 0), two.pid()) << "the same process, joined again";
  again.barrier();
  world.stop();
  EXPECT_EQ(one.exit_code(20s), 0);
  EXPECT_EQ(two.exit_code(20s), 0);
}

/// Rank 0 of a world of two, from the environment: meets member 1 in a group, then serves until
/// it leaves (or is killed by the test).
TROUPE_ROLE(rank0_pairs) {
  return as_member([](troupe::world& world) {
    auto pair = world.create_rpc_group("pair", {"0", "1"});
    pair.barrier();
    wait_until_gone(pair, "1");
  });
}

// A member with world_options::rejoin whose rank 0 dies keeps trying to join again; a new rank 0
// at the same address forms the world anew with it (a restart, as torchrun's elastic agents
// make one). Stopped while it tries, it stops.
TEST(world_joining, a_member_with_rejoin_forms_the_world_again_with_a_restarted_rank_0) {
  troupe::runtime rt;
  const int port = free_port();
  member_process first{"rank0_pairs", member_environment(0, 2, port)};
  auto options = member_options(1, 2, port);
  options.rejoin = true;
  troupe::world world{rt, options};
  std::atomic<int> rejoined{0};
  world.on_rejoined([&rejoined] { ++rejoined; });
  {
    auto pair = world.create_rpc_group("pair", {"0", "1"});
    pair.barrier();
    EXPECT_EQ(pair.rpc_sync("0", process_id, 0), first.pid()) << "rank 0 is the first process";
  }
  first.kill_and_collect();
  ASSERT_TRUE(eventually([&] { return world.size() == 1; })) << "rank 0 was lost";
  member_process second{"rank0_pairs", member_environment(0, 2, port)};
  ASSERT_TRUE(eventually([&] { return rejoined == 1; })) << "member 1 joined the new rank 0";
  auto pair = world.create_rpc_group("pair", {"0", "1"});
  EXPECT_EQ(pair.rpc_sync("0", process_id, 0), second.pid()) << "rank 0 is the new process";
  pair.barrier();
  second.kill_and_collect();
  ASSERT_TRUE(eventually([&] { return world.size() == 1; })) << "the new rank 0 was lost too";
  world.stop(); // while it tries to join again: it stops
  EXPECT_THROW((void)world.members(), troupe::state_error);
}

/// A member of a world that takes up to three, joined from the environment: exits 0 if rank 0
/// refuses it with a message that says TEST_EXPECTED, 1 if it says something else, 2 if it is
/// taken in.
TROUPE_ROLE(refused_joiner) {
  try {
    troupe::runtime rt;
    auto options = troupe::world_options::from_environment();
    options.timeout = 10s;
    troupe::world world{rt, options};
    return 2;
  } catch (const troupe::invalid_argument& e) {
    const std::string expected = std::getenv("TEST_EXPECTED");
    if (std::string{e.what()}.find(expected) != std::string::npos)
      return 0;
    std::cerr << "expected '" << expected << "', got: " << e.what() << "\n";
    return 1;
  }
}

/// Member 1 of a world of one that takes three: joins, then stays until told to stop.
TROUPE_ROLE(joins_and_stays) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("pair", {"0", "1"});
    group.barrier(); // rank 0 has seen it join
    group.barrier(); // rank 0 is done
  });
}

/// What a joiner of `rank` named `name` into the world on `port` (one member, up to three; the
/// joiner expecting `max_size`) exits with, expecting a refusal that says `expected`.
int refusal_of(int port, int rank, const std::string& name, int max_size,
               const std::string& expected) {
  auto environment = member_environment(rank, 1, port);
  environment["TROUPE_NAME"] = name;
  environment["TROUPE_MAX_WORLD_SIZE"] = std::to_string(max_size);
  environment["TEST_EXPECTED"] = expected;
  member_process joiner{"refused_joiner", environment};
  return joiner.exit_code(20s);
}

TEST(world_joining, a_rank_or_name_a_member_holds_or_another_world_size_is_refused_naming_it) {
  troupe::runtime rt;
  const int port = free_port();
  auto options = member_options(0, 1, port);
  options.max_world_size = 3;
  troupe::world world{rt, options}; // formed at once: a world of one
  join_recorder joins{world};
  auto environment = member_environment(1, 1, port);
  environment["TROUPE_MAX_WORLD_SIZE"] = "3";
  member_process stays{"joins_and_stays", environment};
  ASSERT_TRUE(joins.wait_for("1", 1));
  auto pair = world.create_rpc_group("pair", {"0", "1"});
  pair.barrier();
  EXPECT_EQ(refusal_of(port, 2, "0", 3, "the name '0' is held by rank 0"), 0);
  EXPECT_EQ(refusal_of(port, 1, "other", 3, "asks for rank 1, held by '1'"), 0);
  EXPECT_EQ(refusal_of(port, 1, "1", 3, "held by '1', who is still in the world"), 0);
  EXPECT_EQ(refusal_of(port, 2, "other", 5, "at most 5, rank 0 (0) one of 1 and at most 3"), 0);
  EXPECT_EQ(world.members(), (std::vector<std::string>{"0", "1"})) << "nothing changed";
  pair.barrier();
  EXPECT_EQ(stays.exit_code(20s), 0);
}

/// A member that asks for any rank (TROUPE_RANK=any) of a world of one that takes three: joins,
/// meets the others once all three are in, and leaves.
TROUPE_ROLE(joins_at_any_rank) {
  return as_member([](troupe::world& world) {
    require(world.rank() == 1 || world.rank() == 2, "a rank from world_size up");
    for (int i = 0; i < 2000 && world.size() < 3; ++i)
      std::this_thread::sleep_for(10ms);
    auto group = world.create_rpc_group("abc", {"0", "a", "b"});
    group.barrier();
  });
}

/// The environment of a member named `name` that asks for any rank of the world of one (up to
/// three) on `port`.
std::map<std::string, std::string> any_rank_environment(const std::string& name, int port) {
  auto environment = member_environment(1, 1, port);
  environment["TROUPE_RANK"] = "any";
  environment["TROUPE_NAME"] = name;
  environment["TROUPE_MAX_WORLD_SIZE"] = "3";
  return environment;
}

TEST(world_joining, members_that_ask_for_any_rank_get_the_free_ones_until_the_world_is_full) {
  troupe::runtime rt;
  const int port = free_port();
  auto options = member_options(0, 1, port);
  options.max_world_size = 3;
  troupe::world world{rt, options};
  member_process a{"joins_at_any_rank", any_rank_environment("a", port)};
  member_process b{"joins_at_any_rank", any_rank_environment("b", port)};
  for (int i = 0; i < 2000 && world.size() < 3; ++i)
    std::this_thread::sleep_for(10ms);
  ASSERT_EQ(world.size(), 3);
  const std::set<std::string> joined{world.member_name(1), world.member_name(2)};
  EXPECT_EQ(joined, (std::set<std::string>{"a", "b"})) << "ranks 1 and 2, one each";
  for (const auto& [name, expected] :
       {std::pair<std::string, std::string>{"c", "no rank is free for 'c'"},
        {"0", "the name '0' is held by rank 0"}}) {
    auto environment = any_rank_environment(name, port);
    environment["TEST_EXPECTED"] = expected;
    member_process refused{"refused_joiner", environment};
    EXPECT_EQ(refused.exit_code(20s), 0) << name;
  }
  world.create_rpc_group("abc", {"0", "a", "b"}).barrier();
  EXPECT_EQ(a.exit_code(20s), 0);
  EXPECT_EQ(b.exit_code(20s), 0);
}

/// Rank 0 of a world of one that takes two: meets the member that joins, and serves until it
/// leaves.
TROUPE_ROLE(rank0_waits_for_a_joiner) {
  return as_member([](troupe::world& world) {
    for (int i = 0; i < 6000 && world.size() < 2; ++i)
      std::this_thread::sleep_for(10ms);
    auto pair = world.create_rpc_group("pair", {"0", "1"});
    pair.barrier();
    wait_until_gone(pair, "1");
  });
}

// A rank 0 that takes connections but does not finish the handshake within the joiner's 5 s
// grace (here frozen for 7 s; a busy one on a loaded host) is waited for, not taken for lost.
TEST(world_joining, a_joiner_waits_for_a_rank_0_that_takes_connections_but_answers_late) {
  troupe::runtime rt;
  const int port = free_port();
  auto environment = member_environment(0, 1, port);
  environment["TROUPE_MAX_WORLD_SIZE"] = "2";
  member_process rank0{"rank0_waits_for_a_joiner", environment};
  ASSERT_TRUE(eventually([&] { return listening_on(port); }, 20s));
  ASSERT_TRUE(rank0.freeze());
  std::thread resume{[&rank0] {
    std::this_thread::sleep_for(7s);
    rank0.signal(SIGCONT);
  }};
  auto options = member_options(1, 1, port);
  options.max_world_size = 2;
  std::optional<troupe::world> world;
  EXPECT_NO_THROW(world.emplace(rt, options)) << "the joiner took the frozen rank 0 for lost";
  resume.join();
  if (!world)
    return;
  EXPECT_EQ(world->members(), (std::vector<std::string>{"0", "1"}));
  world->create_rpc_group("pair", {"0", "1"}).barrier();
  world->stop();
  EXPECT_EQ(rank0.exit_code(20s), 0);
}

TEST(world_joining, a_joiner_that_cannot_reach_rank_0_fails_with_peer_lost_naming_it) {
  troupe::runtime rt;
  auto options = member_options(2, 2, free_port()); // nobody listens there
  options.max_world_size = 3;
  try {
    troupe::world world{rt, options};
    ADD_FAILURE() << "joined a world without rank 0";
  } catch (const troupe::peer_lost& e) {
    EXPECT_NE(std::string{e.what()}.find("rank 0 (127.0.0.1:"), std::string::npos) << e.what();
  }
}

TEST(world_joining, max_world_size_below_world_size_or_a_rank_beyond_it_is_invalid) {
  troupe::runtime rt;
  auto options = member_options(0, 2, free_port());
  options.max_world_size = 1;
  EXPECT_THROW((troupe::world{rt, options}), troupe::invalid_argument);
  options.max_world_size = 2;
  options.rank = troupe::any_rank;
  EXPECT_THROW((troupe::world{rt, options}), troupe::invalid_argument) << "no rank to join at";
  options.max_world_size = 3;
  options.name.clear();
  EXPECT_THROW((troupe::world{rt, options}), troupe::invalid_argument) << "any rank, no name";
  options = member_options(3, 2, free_port());
  options.max_world_size = 3;
  try {
    troupe::world world{rt, options};
    ADD_FAILURE() << "rank 3 of a world of at most 3 was taken";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("rank must be in 0..2"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace troupe::testing
