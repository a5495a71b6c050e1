// queue<T>, shared_tensor<T> and shm_segment in every state a user can leave them in: empty,
// moved from, and used while another handle to the same queue goes away. Each use works or
// throws a typed error naming what was wrong; none crashes or hangs.
#include "../empty_handle_checks.hpp"
#include "process_support.hpp"

#include "troupe/queues/queue.hpp"
#include "troupe/queues/shared_tensor.hpp"
#include "troupe/queues/shm_segment.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <thread>
#include <utility>

namespace {

using namespace std::chrono_literals;
using troupe::testing::expect_empty_handle_error;
using troupe::testing::unique_name;

TEST(queue_handle_states, a_queue_moved_from_throws_state_error_and_the_one_moved_to_works) {
  auto q = troupe::queue<int>::create(unique_name("moved"));
  auto kept = std::move(q);
  // NOLINTBEGIN(bugprone-use-after-move): what this test is about
  expect_empty_handle_error([&] { q.put(1); }, "troupe::queue");
  expect_empty_handle_error([&] { (void)q.get(1ms); }, "troupe::queue");
  expect_empty_handle_error([&] { (void)q.try_get(); }, "troupe::queue");
  expect_empty_handle_error([&] { (void)q.size(); }, "troupe::queue");
  expect_empty_handle_error([&] { (void)q.name(); }, "troupe::queue");
  expect_empty_handle_error([&] { q.close(); }, "troupe::queue");
  expect_empty_handle_error([&] { q.unlink(); }, "troupe::queue");
  // NOLINTEND(bugprone-use-after-move)
  kept.put(7);
  EXPECT_EQ(kept.get(1s), 7);
  kept.unlink();
}

TEST(queue_handle_states, a_receiver_blocked_on_its_handle_outlives_the_creators_handle) {
  const auto name = unique_name("outlived");
  std::optional<troupe::queue<int>> creator{troupe::queue<int>::create(name)};
  auto receiver = troupe::queue<int>::open(name);
  std::thread owner([&] {
    std::this_thread::sleep_for(20ms);
    creator->put(1);
    creator->close();
    creator->unlink();
    creator.reset(); // the creator's handle is gone; the receiver's still reads
  });
  EXPECT_EQ(receiver.get(5s), 1);
  EXPECT_THROW((void)receiver.get(5s), troupe::queue_closed);
  owner.join();
}

TEST(queue_handle_states, an_empty_shared_tensor_has_no_memory_and_says_so_when_viewed) {
  troupe::shared_tensor<float> empty;
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_TRUE(empty.shape().empty());
  expect_empty_handle_error([&] { (void)empty.view(); }, "troupe::shared_tensor");
  expect_empty_handle_error([&] { (void)empty.segment(); }, "troupe::shared_tensor");
}

TEST(queue_handle_states, a_shared_tensor_moved_from_is_empty_and_the_one_moved_to_keeps_it) {
  troupe::shared_tensor<float> t{{2, 3}};
  t.view()(1, 2) = 5.0f;
  auto kept = std::move(t);
  // NOLINTBEGIN(bugprone-use-after-move): what this test is about
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.data(), nullptr);
  expect_empty_handle_error([&] { (void)t.view(); }, "troupe::shared_tensor");
  troupe::shared_tensor<float> assigned;
  assigned = std::move(kept);
  EXPECT_EQ(kept.data(), nullptr);
  // NOLINTEND(bugprone-use-after-move)
  EXPECT_EQ(assigned.size(), 6u);
  EXPECT_EQ(assigned.view()(1, 2), 5.0f);
}

TEST(queue_handle_states, a_segment_moved_from_throws_state_error_and_the_one_moved_to_works) {
  auto segment = troupe::shm_segment::create(64);
  auto kept = std::move(segment);
  // NOLINTBEGIN(bugprone-use-after-move): what this test is about
  expect_empty_handle_error([&] { (void)segment.data(); }, "troupe::shm_segment");
  expect_empty_handle_error([&] { (void)segment.size(); }, "troupe::shm_segment");
  expect_empty_handle_error([&] { (void)segment.name(); }, "troupe::shm_segment");
  expect_empty_handle_error([&] { (void)segment.share(); }, "troupe::shm_segment");
  expect_empty_handle_error([&] { (void)segment.shared_with_others(); }, "troupe::shm_segment");
  // NOLINTEND(bugprone-use-after-move)
  EXPECT_EQ(kept.size(), 64u);
  EXPECT_FALSE(kept.shared_with_others());
}

} // namespace
