// rpc_group, remote_ref and world in every state a user can leave them in: moved from, used
// after their world stopped, and used from other threads while it stops. Each use works or
// throws a typed error naming what was wrong; none crashes or hangs. A world of one member: the
// states are this process's own.
#include "world_test_support.hpp"

#include "../empty_handle_checks.hpp"

#include <atomic>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace troupe::testing {
namespace {

class world_handle_states : public ::testing::Test {
protected:
  troupe::runtime rt;
  std::optional<troupe::world> world{std::in_place, rt, member_options(0, 1, free_port())};
  std::optional<troupe::rpc_group> group{world->create_rpc_group("alone", {"0"})};
};

TEST_F(world_handle_states, a_group_moved_from_throws_state_error_and_the_one_moved_to_works) {
  auto kept = std::move(*group);
  auto& moved = *group;
  // NOLINTBEGIN(bugprone-use-after-move): what this test is about
  expect_empty_handle_error([&] { (void)moved.rpc_sync("0", add_numbers, 1, 2); },
                            "troupe::rpc_group");
  expect_empty_handle_error([&] { (void)moved.name(); }, "troupe::rpc_group");
  expect_empty_handle_error([&] { (void)moved.members(); }, "troupe::rpc_group");
  expect_empty_handle_error([&] { moved.barrier(); }, "troupe::rpc_group");
  expect_empty_handle_error([&] { moved.pair("k", counter{}); }, "troupe::rpc_group");
  expect_empty_handle_error([&] { moved.destroy(); }, "troupe::rpc_group");
  // NOLINTEND(bugprone-use-after-move)
  EXPECT_EQ(kept.rpc_sync("0", add_numbers, 1, 2), 3);
}

TEST_F(world_handle_states, a_reference_moved_from_throws_state_error_and_the_one_moved_to_works) {
  auto ref = group->remote("0", add_numbers, 2, 5);
  auto kept = std::move(ref);
  // NOLINTBEGIN(bugprone-use-after-move): what this test is about
  expect_empty_handle_error([&] { (void)ref.to_here(); }, "troupe::remote_ref");
  expect_empty_handle_error([&] { (void)ref.owner(); }, "troupe::remote_ref");
  // NOLINTEND(bugprone-use-after-move)
  EXPECT_EQ(kept.to_here(), 7);
  EXPECT_NE(kept.owner().find("member '0'"), std::string::npos) << kept.owner();
}

TEST_F(world_handle_states, handles_used_after_their_world_stopped_throw_state_error) {
  group->pair("tally", counter{});
  auto paired = group->get_paired<counter>("tally");
  auto kept = group->remote("0", add_numbers, 1, 1);
  world->stop();
  EXPECT_THROW((void)group->rpc_sync("0", add_numbers, 1, 2), troupe::state_error);
  EXPECT_THROW(group->barrier(), troupe::state_error);
  EXPECT_THROW((void)paired.rpc_sync(count_up), troupe::state_error);
  EXPECT_THROW((void)kept.to_here(), troupe::state_error);
  EXPECT_THROW((void)world->create_rpc_group("later", {"0"}), troupe::state_error);
  EXPECT_EQ(group->name(), "alone") << "what it knows of itself stays readable";
  world.reset();
  EXPECT_THROW((void)group->rpc_sync("0", add_numbers, 1, 2), troupe::state_error);
  group.reset(); // and the last handles go without a world
}

/// Four threads call through the group while this one stops the world: each call returns its
/// value or fails typed (state_error once stopped; peer_lost or pool_closed for a call the stop
/// caught on its way), and none waits for ever.
TEST_F(world_handle_states, calls_from_other_threads_while_the_world_stops_end_typed) {
  std::atomic<int> ran{0};
  const auto call = [this, &ran](int i) {
    auto r = group->rpc_async("0", add_numbers, i, 1);
    try {
      EXPECT_EQ(r.get(10s), i + 1);
      ++ran;
    } catch (const troupe::peer_lost&) {
    } catch (const troupe::state_error&) {
    }
  };
  EXPECT_EQ(threads_refused_once_ended<troupe::state_error>(
              call, [this] { world->stop(); }, 20ms),
            4)
    << "each caller met the stopped world";
  EXPECT_GT(ran.load(), 0);
}

} // namespace
} // namespace troupe::testing
