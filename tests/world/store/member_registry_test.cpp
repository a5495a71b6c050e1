// A world's members as its store says: ranks and names claimed without a coordinator, joins and
// losses seen by every member, a member whose lease goes lost for all at once, and records that
// a stranger wrote into the store ignored.
#include "etcd_servers.hpp"
#include "store/member_registry.hpp"
#include "troupe/actors/error.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

namespace {

using namespace std::chrono_literals;
namespace etcd = troupe::detail::etcd;
using troupe::testing::etcd_servers;

/// What one member's registry told it, for the test to wait on.
struct heard {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> events; // "+name", "~name" (leaves), "-name", "cut"

  etcd::registry_handlers handlers() {
    return {[this](const etcd::member_record& r) { add("+" + r.name); },
            [this](const etcd::member_record& r) { add("~" + r.name); },
            [this](const etcd::member_record& r) { add("-" + r.name); },
            [this](const std::string&) { add("cut"); }};
  }
  void add(std::string event) {
    std::scoped_lock lock{mutex};
    events.push_back(std::move(event));
    changed.notify_all();
  }
  bool wait_for(const std::string& event, std::chrono::seconds limit = 10s, std::size_t times = 1) {
    std::unique_lock lock{mutex};
    return changed.wait_for(lock, limit, [&] {
      return static_cast<std::size_t>(std::count(events.begin(), events.end(), event)) >= times;
    });
  }
  std::size_t count(const std::string& event) {
    std::scoped_lock lock{mutex};
    return static_cast<std::size_t>(std::count(events.begin(), events.end(), event));
  }
};

class member_registry : public ::testing::Test {
protected:
  void SetUp() override {
    if (!etcd_servers::installed())
      GTEST_SKIP() << "etcd is not installed (scripts/setup.sh installs etcd-server)";
    servers_.emplace(1);
  }
  etcd::registry_settings settings(int max_size = 8) const {
    return {{servers_->endpoints(), nullptr, 2s}, "test-world", max_size, 3s};
  }
  static etcd::member_record record(int rank, const std::string& name) {
    return {rank, name, "incarnation-of-" + name, "127.0.0.1:1"};
  }

  std::optional<etcd_servers> servers_;
};

TEST_F(member_registry, members_see_each_other_join_and_leave) {
  heard of_a;
  heard of_b;
  etcd::member_registry a{settings(), of_a.handlers()};
  EXPECT_EQ(a.claim(record(0, "a")), 0);
  {
    etcd::member_registry b{settings(), of_b.handlers()};
    EXPECT_EQ(b.members(), (std::vector{record(0, "a")})); // read before it watched
    EXPECT_EQ(b.claim(record(1, "b")), 1);
    ASSERT_TRUE(of_a.wait_for("+b"));
  }
  ASSERT_TRUE(of_a.wait_for("-b", 3s)); // revoked on the way out: at once, not after the TTL
  EXPECT_EQ(a.members(), (std::vector{record(0, "a")}));
  const auto losses = a.losses(); // and when, for a lookup of what it held to look back
  ASSERT_EQ(losses.size(), 1u);
  EXPECT_EQ(losses.front().record, record(1, "b"));
  EXPECT_GT(losses.front().revision, losses.front().record.since);
  EXPECT_EQ(of_a.count("+a"), 0u); // never told of itself
  EXPECT_EQ(of_a.count("cut"), 0u);
}

TEST_F(member_registry, a_member_that_leaves_says_so_before_its_record_goes) {
  heard of_a;
  etcd::member_registry a{settings(), of_a.handlers()};
  a.claim(record(0, "a"));
  {
    heard of_b;
    etcd::member_registry b{settings(), of_b.handlers()};
    auto with_devices = record(1, "b");
    with_devices.devices = {"cpu", "cuda:0"};
    b.claim(with_devices);
    ASSERT_TRUE(of_a.wait_for("+b"));
    const auto seen = a.members();
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[1].devices, (std::vector<std::string>{"cpu", "cuda:0"}));
    // The store's order of creation: the older member has the lower revision.
    EXPECT_GT(seen[0].since, 0);
    EXPECT_GT(seen[1].since, seen[0].since);
    EXPECT_EQ(seen[1].since, b.members()[1].since); // the claimer knows its own at once
    b.leave();
    ASSERT_TRUE(of_a.wait_for("~b"));
  }
  ASSERT_TRUE(of_a.wait_for("-b", 3s));
  EXPECT_EQ(of_a.count("+b"), 1u); // its leaving is no second join
}

// A member stopping while the store is silent (a partition, a stalled server) tells it within a
// third of the TTL or gives up, typed: it never waits longer than its lease lives.
TEST_F(member_registry, leaving_gives_up_within_the_ttl_when_the_store_is_silent) {
  auto patient = settings();
  patient.store.request_timeout = 5s; // as the world's requests wait: longer than the TTL
  heard of_a;
  etcd::member_registry a{patient, of_a.handlers()};
  a.claim(record(0, "a"));
  servers_->pause(0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(a.leave(), troupe::network_error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, patient.ttl) << "it waited past the TTL";
  servers_->resume(0);
}

TEST_F(member_registry, a_rank_or_a_name_is_held_by_one_member) {
  heard ignored;
  etcd::member_registry a{settings(), ignored.handlers()};
  etcd::member_registry b{settings(), ignored.handlers()};
  a.claim(record(0, "a"));
  try {
    b.claim(record(0, "b"));
    ADD_FAILURE() << "rank 0 given twice";
  } catch (const troupe::state_error& e) {
    EXPECT_NE(std::string{e.what()}.find("rank 0 is held"), std::string::npos) << e.what();
  }
  try {
    b.claim(record(1, "a"));
    ADD_FAILURE() << "name a given twice";
  } catch (const troupe::state_error& e) {
    EXPECT_NE(std::string{e.what()}.find("'a' is held in the world's store by rank 0"),
              std::string::npos)
      << e.what();
  }
  EXPECT_THROW(b.claim(record(8, "b")), troupe::state_error); // outside a world of 8
  EXPECT_EQ(b.claim(record(1, "b")), 1); // the failed claims left nothing behind
}

TEST_F(member_registry, a_joiner_takes_the_lowest_free_rank_without_a_coordinator) {
  heard ignored;
  etcd::member_registry a{settings(4), ignored.handlers()};
  etcd::member_registry b{settings(4), ignored.handlers()};
  etcd::member_registry c{settings(4), ignored.handlers()};
  etcd::member_registry d{settings(4), ignored.handlers()};
  etcd::member_registry x{settings(4), ignored.handlers()};
  a.claim(record(0, "a"));
  EXPECT_EQ(x.claim(record(-1, "x"), 2), 2);
  EXPECT_EQ(b.claim(record(-1, "b"), 2), 3);
  EXPECT_EQ(c.claim(record(-1, "c"), 1), 1);
  try {
    d.claim(record(-1, "d"), 1);
    ADD_FAILURE() << "a full world took a member";
  } catch (const troupe::state_error& e) {
    EXPECT_NE(std::string{e.what()}.find("the world is full"), std::string::npos) << e.what();
  }
}

TEST_F(member_registry, a_member_whose_lease_goes_is_lost_for_everyone_and_told_it_is_out) {
  heard of_a;
  heard of_b;
  heard of_c;
  etcd::member_registry a{settings(), of_a.handlers()};
  etcd::member_registry b{settings(), of_b.handlers()};
  etcd::member_registry c{settings(), of_c.handlers()};
  a.claim(record(0, "a"));
  b.claim(record(1, "b"));
  c.claim(record(2, "c"));
  ASSERT_TRUE(of_a.wait_for("+b"));
  ASSERT_TRUE(of_c.wait_for("+b"));
  // What a partition or a frozen process does to b's lease, done by hand: the store ends it.
  etcd::client store{settings().store};
  const auto b_key = store.get("/troupe/test-world/members/0000001");
  ASSERT_TRUE(b_key);
  store.revoke(b_key->lease);
  EXPECT_TRUE(of_a.wait_for("-b", 3s));
  EXPECT_TRUE(of_c.wait_for("-b", 3s));
  EXPECT_TRUE(of_b.wait_for("cut", 5s)); // at its next renewal
  EXPECT_EQ(of_a.count("cut"), 0u);
}

TEST_F(member_registry, a_member_whose_lease_went_claims_its_rank_again_as_a_new_incarnation) {
  heard of_a;
  heard of_b;
  etcd::member_registry a{settings(), of_a.handlers()};
  a.claim(record(0, "a"));
  std::optional<etcd::member_registry> b{std::in_place, settings(), of_b.handlers()};
  b->claim(record(1, "b"));
  etcd::client store{settings().store};
  store.revoke(store.get("/troupe/test-world/members/0000001")->lease);
  ASSERT_TRUE(of_a.wait_for("-b", 3s));
  ASSERT_TRUE(of_b.wait_for("cut", 5s));
  b.reset();
  heard of_b_again;
  etcd::member_registry b_again{settings(), of_b_again.handlers()};
  auto second = record(1, "b");
  second.incarnation = "the second";
  EXPECT_EQ(b_again.claim(second), 1);
  EXPECT_EQ(b_again.members(), (std::vector{record(0, "a"), second}));
  ASSERT_TRUE(of_a.wait_for("+b", 10s, 2)); // its first incarnation was the first
  EXPECT_EQ(a.members(), (std::vector{record(0, "a"), second}));
}

TEST_F(member_registry, records_a_stranger_wrote_into_the_store_are_ignored) {
  heard of_a;
  etcd::member_registry a{settings(), of_a.handlers()};
  a.claim(record(0, "a"));
  etcd::client store{settings().store};
  store.put("/troupe/test-world/members/0000001", "not json");
  store.put("/troupe/test-world/members/0000002", R"({"name":7})");
  store.put("/troupe/test-world/members/0000099",
            R"({"name":"x","incarnation":"i","address":"a"})");
  store.put("/troupe/test-world/members/abc", R"({"name":"y","incarnation":"i","address":"a"})");
  store.put("/troupe/test-world/members/0000003",
            R"({"name":")" + std::string(40'000, 'z') +
              R"(","incarnation":"i","address":"a","devices":["cpu"]})");
  store.put("/troupe/test-world/members/0000004",
            R"({"name":"d","incarnation":"i","address":"127.0.0.1:2","devices":["cpu"]})");
  ASSERT_TRUE(of_a.wait_for("+d"));
  EXPECT_EQ(a.ignored(), 5u);
  EXPECT_EQ(a.members().size(), 2u);
  std::scoped_lock lock{of_a.mutex};
  EXPECT_EQ(of_a.events, (std::vector<std::string>{"+d"}));
}

} // namespace
