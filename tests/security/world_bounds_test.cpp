// What one member may make another hold, on 127.0.0.1: outcomes kept for a lost member are
// freed, calls in flight and kept outcomes are bounded per member, and an answered call holds no
// memory until its timeout.
#include "../process_usage.hpp"

#include <malloc.h>

#include "world_security_support.hpp"

namespace troupe::testing {
namespace {

TEST(world_bounds, what_a_lost_member_kept_is_freed) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's quarantine keeps freed memory resident";
#endif
  troupe::runtime rt;
  const int port = free_port();
  auto members = start_members("keeper", 2, port);
  troupe::world world{rt, member_options(0, 2, port)};
  std::atomic<bool> lost{false};
  world.on_member_lost([&](const std::string&, int) { lost = true; });
  auto group = world.create_rpc_group("all", world.members());
  group.barrier();
  const long before = resident_kib();
  group.barrier();
  EXPECT_GT(resident_kib() - before, 48 * 1024) << "the kept outcome is not here";
  members[0].kill_and_collect();
  ASSERT_TRUE(becomes_true(lost));
  EXPECT_LT(resident_kib() - before, 32 * 1024) << "the lost member's kept outcome stayed";
}

TEST(world_bounds, one_member_cannot_queue_calls_on_another_without_bound) {
  world_with_a_server w;
  // Calls with a timeout travel over TCP; four threads serve them, a second each.
  std::vector<troupe::async_result<int>> calls;
  for (int i = 0; i < 16'400; ++i)
    calls.push_back(w.group.rpc_async("1", 60s, sleep_ms, 1000));
  try {
    calls.back().get(20s);
    ADD_FAILURE() << "the 16,400th call was queued";
  } catch (const troupe::state_error& e) {
    EXPECT_NE(std::string{e.what()}.find("calls waiting or running"), std::string::npos)
      << e.what();
  }
  w.server.kill_and_collect();
}

TEST(world_bounds, one_member_cannot_keep_outcomes_on_another_without_bound) {
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 1, free_port())};
  auto group = world.create_rpc_group("self", world.members());
  std::vector<troupe::remote_ref<int>> refs;
  refs.reserve(65'536);
  for (int i = 0; i < 65'536; ++i)
    refs.push_back(group.remote("0", add_numbers, i, 1));
  try {
    group.remote("0", add_numbers, 1, 1);
    ADD_FAILURE() << "a 65,537th outcome was kept";
  } catch (const troupe::state_error& e) {
    EXPECT_NE(std::string{e.what()}.find("release some"), std::string::npos) << e.what();
  }
  refs.pop_back(); // releasing one makes room for one, once the release (sent, not awaited) ran
  std::optional<int> kept;
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (!kept && std::chrono::steady_clock::now() < until) {
    try {
      kept = group.remote("0", add_numbers, 2, 2).to_here();
    } catch (const troupe::state_error&) {
      std::this_thread::sleep_for(10ms);
    }
  }
  EXPECT_EQ(kept, 4);
}

TEST(world_bounds, an_answered_call_holds_no_memory_until_its_timeout) {
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 1, free_port())};
  auto group = world.create_rpc_group("self", world.members());
  for (int i = 0; i < 1000; ++i) // warm up: the tables reach their steady size
    group.rpc_sync("0", 600s, add_numbers, i, 1);
  const auto before = mallinfo2().uordblks;
  for (int i = 0; i < 50'000; ++i)
    ASSERT_EQ(group.rpc_sync("0", 600s, add_numbers, i, 1), i + 1);
  const auto grown = static_cast<long>(mallinfo2().uordblks) - static_cast<long>(before);
  EXPECT_LT(grown, 2L << 20) << "50,000 answered calls still hold " << grown << " bytes";
}

} // namespace
} // namespace troupe::testing
