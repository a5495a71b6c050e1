#include "process_support.hpp"

#include "troupe/actors/detail/idle_cores.hpp"
#include "troupe/actors/tensor_serialization.hpp"
#include "troupe/queues/queue.hpp"

#include <gtest/gtest.h>
#include <xtensor/xarray.hpp>
#include <xtensor/xrandom.hpp>

#include <chrono>
#include <map>
#include <set>
#include <thread>

namespace {

using namespace troupe::testing;
using namespace std::chrono_literals;

/// Creates a queue and unlinks it when the test ends.
template <class T>
struct scoped_queue {
  explicit scoped_queue(const std::string& stem, troupe::queue_options options = {})
    : name(unique_name(stem)), q(troupe::queue<T>::create(name, options)) {}
  ~scoped_queue() { q.unlink(); }
  std::string name;
  troupe::queue<T> q;
};

struct job {
  int id = 0;
  std::string label;
  xt::xarray<float> data;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(id, label, data);
  }
};

TEST(queue, values_go_through_in_order) {
  scoped_queue<std::string> s{"order"};
  for (int i = 0; i < 100; ++i)
    s.q.put("message " + std::to_string(i));
  EXPECT_EQ(s.q.size(), 100u);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(s.q.get(), "message " + std::to_string(i));
  EXPECT_FALSE(s.q.try_get().has_value());
}

TEST(queue, structs_holding_tensors_and_a_second_handle_in_another_thread) {
  scoped_queue<job> s{"structs"};
  auto reader = troupe::queue<job>::open(s.name);
  std::thread producer([&] {
    for (int i = 0; i < 50; ++i)
      s.q.put(job{i, "j" + std::to_string(i), xt::ones<float>({3, 4}) * static_cast<float>(i)});
  });
  for (int i = 0; i < 50; ++i) {
    const auto j = reader.get(10s);
    EXPECT_EQ(j.id, i);
    EXPECT_EQ(j.label, "j" + std::to_string(i));
    EXPECT_EQ(j.data, xt::ones<float>({3, 4}) * static_cast<float>(i));
  }
  producer.join();
}

TEST(queue, opening_with_another_type_names_both_types) {
  scoped_queue<float> s{"typed"};
  try {
    (void)troupe::queue<int>::open(s.name);
    FAIL() << "expected serialization_error";
  } catch (const troupe::serialization_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("carries float"), std::string::npos) << what;
    EXPECT_NE(what.find("queue of int"), std::string::npos) << what;
  }
}

TEST(queue, names_are_validated_and_not_taken_twice) {
  for (const std::string& bad :
       std::vector<std::string>{"", "has space", "slash/inside", std::string(201, 'x'), "dollar$"})
    EXPECT_THROW((void)troupe::queue<int>::create(bad), troupe::invalid_argument) << bad;
  scoped_queue<int> s{"taken"};
  try {
    (void)troupe::queue<int>::create(s.name);
    FAIL() << "expected invalid_argument";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("already exists"), std::string::npos);
  }
  auto same = troupe::queue<int>::open_or_create(s.name);
  same.put(7);
  EXPECT_EQ(s.q.get(), 7);
  EXPECT_THROW((void)troupe::queue<int>::open(unique_name("missing")), troupe::invalid_argument);
  const auto fresh = unique_name("fresh");
  auto created = troupe::queue<int>::open_or_create(fresh);
  created.unlink();
}

TEST(queue, a_full_queue_applies_backpressure) {
  scoped_queue<int> s{"full", {.max_messages = 2}};
  s.q.put(1);
  s.q.put(2);
  EXPECT_THROW(s.q.put(3, 20ms), troupe::timeout_error);
  std::thread consumer([&] {
    std::this_thread::sleep_for(30ms);
    EXPECT_EQ(s.q.get(), 1);
  });
  s.q.put(3, 10s); // waits until the consumer makes room
  consumer.join();
  EXPECT_EQ(s.q.get(), 2);
  EXPECT_EQ(s.q.get(), 3);
}

TEST(queue, the_byte_bound_holds_for_messages_in_the_ring) {
  scoped_queue<std::string> s{"bytes", {.max_messages = 100, .max_bytes = 1024}};
  const std::string chunk(200, 'x');
  for (int i = 0; i < 4; ++i)
    s.q.put(chunk);
  EXPECT_THROW(s.q.put(chunk, 20ms), troupe::timeout_error) << "5 x ~240 bytes > 1024";
  EXPECT_EQ(s.q.get(), chunk);
  s.q.put(chunk, 1s);
}

TEST(queue, a_message_larger_than_the_ring_travels_through_a_segment) {
  troupe::collect_orphan_segments();
  const int before = troupe_shm_entries();
  scoped_queue<std::string> s{"huge", {.max_messages = 8, .max_bytes = 1 << 20}};
  std::string huge(100'000'000, 'h'); // 100 MB through a 1 MiB ring
  huge[12345] = 'x';
  const auto child = spawn([&] {
    auto out = troupe::queue<std::string>::open(s.name);
    out.put(huge);
    out.put("small, behind it");
  });
  ASSERT_EQ(wait_for(child, 60s), 0);
  EXPECT_EQ(troupe_shm_entries(), before + 2) << "the queue and the huge message's segment";
  EXPECT_EQ(s.q.get(5s), huge);
  EXPECT_EQ(s.q.get(5s), "small, behind it");
  EXPECT_EQ(troupe_shm_entries(), before + 1) << "the segment went once the message was taken";
}

TEST(queue, max_message_bytes_refuses_a_larger_message_naming_both_sizes) {
  scoped_queue<std::string> s{"limited", {.max_message_bytes = 4096}};
  try {
    s.q.put(std::string(10'000, 'z'));
    FAIL() << "a message over max_message_bytes was sent";
  } catch (const troupe::capacity_error& e) {
    EXPECT_NE(std::string{e.what()}.find("(100"), std::string::npos) << e.what(); // 10 kB, framed
    EXPECT_NE(std::string{e.what()}.find("max_message_bytes 4 KiB"), std::string::npos) << e.what();
  }
  s.q.put(std::string(1000, 'z'));
  EXPECT_EQ(s.q.get(1s), std::string(1000, 'z')) << "a refused message does not block the queue";
}

TEST(queue, a_spilled_message_that_times_out_leaves_no_segment) {
  troupe::collect_orphan_segments();
  const int before = troupe_shm_entries();
  scoped_queue<std::string> s{"full", {.max_messages = 1, .max_bytes = 4096}};
  s.q.put("occupies the only slot");
  EXPECT_THROW(s.q.put(std::string(1 << 20, 'q'), 20ms), troupe::timeout_error);
  EXPECT_EQ(troupe_shm_entries(), before + 1) << "only the queue";
}

TEST(queue, get_times_out_and_try_get_does_not_wait) {
  scoped_queue<int> s{"empty"};
  EXPECT_THROW((void)s.q.get(20ms), troupe::timeout_error);
  EXPECT_FALSE(s.q.try_get().has_value());
  s.q.put(5);
  EXPECT_EQ(s.q.try_get(), 5);
}

/// How often this thread's waits considered spinning while it got `count` values that another
/// thread puts 1 ms apart (so that nearly every get must wait).
std::uint64_t spins_asked_while_waiting(troupe::queue<int>& q, int count) {
  std::thread sender{[&] {
    for (int i = 0; i < count; ++i) {
      std::this_thread::sleep_for(1ms);
      q.put(i);
    }
  }};
  const auto before = troupe::detail::spins_asked_on_this_thread();
  for (int i = 0; i < count; ++i)
    EXPECT_EQ(q.get(5s), i);
  const auto asked = troupe::detail::spins_asked_on_this_thread() - before;
  sender.join();
  return asked;
}

// Whether a wait that considers spinning does spin depends on the machine's load (idle_cores.hpp,
// measured by bench/scale); a handle told not to spin never considers it.
TEST(queue, a_handle_told_not_to_spin_sleeps_at_once_when_it_must_wait) {
  scoped_queue<int> s{"nospin"};
  EXPECT_GT(spins_asked_while_waiting(s.q, 100), 0u) << "a handle spins by default";
  s.q.spin_while_waiting(false);
  EXPECT_EQ(spins_asked_while_waiting(s.q, 100), 0u);
}

TEST(queue, close_refuses_puts_lets_receivers_drain_then_reports_closed) {
  scoped_queue<int> s{"close"};
  s.q.put(1);
  s.q.close();
  EXPECT_TRUE(s.q.closed());
  EXPECT_THROW(s.q.put(2), troupe::queue_closed);
  EXPECT_EQ(s.q.get(), 1);
  EXPECT_THROW((void)s.q.get(), troupe::queue_closed);
  EXPECT_THROW((void)s.q.get(10ms), troupe::queue_closed);
}

TEST(queue, close_wakes_a_blocked_receiver) {
  scoped_queue<int> s{"wake"};
  std::thread closer([&] {
    std::this_thread::sleep_for(30ms);
    s.q.close();
  });
  EXPECT_THROW((void)s.q.get(), troupe::queue_closed);
  closer.join();
}

TEST(queue, many_sender_and_receiver_processes_deliver_each_message_once_in_sender_order) {
  scoped_queue<std::pair<int, int>> work{"mpmc", {.max_messages = 64}};
  scoped_queue<std::pair<int, int>> seen{"mpmc-seen",
                                         {.max_messages = 100000, .max_bytes = 64 << 20}};
  constexpr int senders = 3, receivers = 2, per_sender = 2000;
  std::vector<pid_t> children;
  for (int r = 0; r < receivers; ++r)
    children.push_back(spawn([&] {
      auto in = troupe::queue<std::pair<int, int>>::open(work.name);
      auto out = troupe::queue<std::pair<int, int>>::open(seen.name);
      std::map<int, int> last;
      for (;;) {
        std::pair<int, int> m;
        try {
          m = in.get();
        } catch (const troupe::queue_closed&) {
          return;
        }
        if (last.count(m.first) && m.second <= last[m.first])
          throw std::runtime_error("out of order");
        last[m.first] = m.second;
        out.put(m);
      }
    }));
  std::vector<pid_t> producers;
  for (int p = 0; p < senders; ++p)
    producers.push_back(spawn([&, p] {
      auto out = troupe::queue<std::pair<int, int>>::open(work.name);
      for (int i = 0; i < per_sender; ++i)
        out.put({p, i});
    }));
  for (auto pid : producers)
    EXPECT_EQ(wait_for(pid, 60s), 0);
  work.q.close();
  for (auto pid : children)
    EXPECT_EQ(wait_for(pid, 60s), 0) << "a receiver saw one sender's messages out of order";
  std::set<std::pair<int, int>> all;
  while (auto m = seen.q.try_get())
    EXPECT_TRUE(all.insert(*m).second) << "delivered twice: " << m->first << "/" << m->second;
  EXPECT_EQ(all.size(), static_cast<std::size_t>(senders * per_sender));
}

} // namespace
