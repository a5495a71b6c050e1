// Processes killed with SIGKILL at random points inside put and get, and garbage written over
// the queue's memory. The other processes must never deadlock, no message may be delivered
// twice, and a message whose put returned must not be lost.
//
// TROUPE_STRESS_ROUNDS sets the rounds per test (default 8); the `stress` configuration of
// ctest runs 100 (ctest -C stress -L stress).
#include "process_support.hpp"

#include "troupe/queues/queue.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <future>
#include <set>
#include <thread>
#include <vector>

namespace {

using namespace troupe::testing;
using namespace std::chrono_literals;

int rounds() {
  const char* env = std::getenv("TROUPE_STRESS_ROUNDS");
  return env != nullptr ? std::max(1, std::atoi(env)) : 8;
}

/// A pipe a child reports ids on (4-byte writes are atomic on a pipe).
struct id_pipe {
  int fds[2];
  id_pipe() { EXPECT_EQ(pipe(fds), 0); }
  ~id_pipe() {
    close(fds[0]);
    if (fds[1] >= 0)
      close(fds[1]);
  }
  void send(int id) const { (void)!write(fds[1], &id, sizeof id); }
  void close_writer() {
    close(fds[1]);
    fds[1] = -1;
  }
  std::vector<int> drain() const {
    std::vector<int> ids;
    int id;
    while (read(fds[0], &id, sizeof id) == sizeof id)
      ids.push_back(id);
    return ids;
  }
};

std::mt19937 rng{std::random_device{}()};

TEST(queue_crash, senders_killed_mid_put_lose_no_completed_message_and_duplicate_none) {
  for (int round = 0; round < rounds(); ++round) {
    const auto name = unique_name("kill-sender");
    auto q =
      troupe::queue<std::vector<int>>::create(name, {.max_messages = 16, .max_bytes = 1 << 20});
    id_pipe done;
    std::vector<pid_t> senders;
    for (int p = 0; p < 2; ++p)
      senders.push_back(spawn([&, p] {
        auto out = troupe::queue<std::vector<int>>::open(name);
        for (int i = 0; i < 3000; ++i) {
          const int id = p * 1'000'000 + i;
          out.put(std::vector<int>(64, id)); // 256 bytes: copies take a while under the lock
          done.send(id);
        }
      }));
    done.close_writer();
    std::multiset<int> received;
    std::atomic<bool> stop{false};
    std::thread consumer([&] {
      while (!stop) {
        try {
          received.insert(q.get(5ms).front());
        } catch (const troupe::timeout_error&) {
        }
      }
    });
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
    kill_and_reap(senders[0]);
    EXPECT_EQ(wait_for(senders[1], 30s), 0) << "round " << round << ": the other sender hung";
    // Drain what is left, then stop the consumer.
    while (q.size() > 0)
      std::this_thread::sleep_for(1ms);
    stop = true;
    consumer.join();
    const auto completed = done.drain();
    for (int id : completed)
      ASSERT_EQ(received.count(id), 1u) << "round " << round << ": message " << id
                                        << (received.count(id) ? " delivered twice" : " lost");
    EXPECT_EQ(std::set<int>(received.begin(), received.end()).size(), received.size());
    q.unlink();
  }
}

TEST(queue_crash, receivers_killed_mid_get_never_block_the_rest_or_duplicate) {
  for (int round = 0; round < rounds(); ++round) {
    const auto name = unique_name("kill-receiver");
    auto q =
      troupe::queue<std::vector<int>>::create(name, {.max_messages = 32, .max_bytes = 1 << 20});
    constexpr int total = 4000;
    id_pipe got[2];
    std::vector<pid_t> receivers;
    for (int r = 0; r < 2; ++r)
      receivers.push_back(spawn([&, r] {
        auto in = troupe::queue<std::vector<int>>::open(name);
        try {
          for (;;)
            got[r].send(in.get().front());
        } catch (const troupe::queue_closed&) {
        }
      }));
    got[0].close_writer();
    got[1].close_writer();
    std::thread killer([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
      kill_and_reap(receivers[0]);
    });
    for (int i = 0; i < total; ++i)
      q.put(std::vector<int>(64, i), 30s); // a timeout here would mean the survivor is stuck
    q.close();
    killer.join();
    EXPECT_EQ(wait_for(receivers[1], 30s), 0) << "round " << round << ": the survivor hung";
    std::multiset<int> all;
    for (auto& p : got)
      for (int id : p.drain())
        all.insert(id);
    EXPECT_EQ(std::set<int>(all.begin(), all.end()).size(), all.size()) << "round " << round;
    // At most the message the killed receiver had taken and not reported is unaccounted for.
    EXPECT_GE(all.size(), static_cast<std::size_t>(total - 1)) << "round " << round;
    q.unlink();
  }
}

TEST(queue_crash, a_process_killed_while_holding_the_lock_does_not_deadlock_the_queue) {
  for (int round = 0; round < rounds(); ++round) {
    const auto name = unique_name("kill-locked");
    // 200 KiB messages: most of a put is the copy into the ring, under the lock.
    auto q =
      troupe::queue<std::vector<char>>::create(name, {.max_messages = 4, .max_bytes = 1 << 20});
    const auto writer = spawn([&] {
      auto out = troupe::queue<std::vector<char>>::open(name);
      for (;;)
        out.put(std::vector<char>(200 << 10, 'x'));
    });
    const auto reader = spawn([&] {
      auto in = troupe::queue<std::vector<char>>::open(name);
      for (;;)
        (void)in.get();
    });
    std::this_thread::sleep_for(std::chrono::microseconds(1000 + rng() % 20000));
    kill_and_reap(writer);
    kill_and_reap(reader);
    // Whatever state they left the ring in, it still works.
    while (q.try_get()) {
    }
    q.put(std::vector<char>(10, 'y'), 5s);
    EXPECT_EQ(q.get(5s), std::vector<char>(10, 'y')) << "round " << round;
    q.unlink();
  }
}

TEST(queue_crash, a_process_frozen_while_holding_the_lock_costs_its_peers_only_a_timeout) {
  for (int round = 0; round < 30; ++round) {
    const auto name = unique_name("freeze-locked");
    // 2 MiB messages in a 16 MiB ring: a put spends its time copying, under the lock.
    auto q =
      troupe::queue<std::vector<char>>::create(name, {.max_messages = 64, .max_bytes = 16 << 20});
    const auto writer = spawn([&] {
      auto out = troupe::queue<std::vector<char>>::open(name);
      for (;;)
        out.put(std::vector<char>(2 << 20, 'x'));
    });
    std::this_thread::sleep_for(std::chrono::microseconds(500 + rng() % 5000));
    kill(writer, SIGSTOP);
    // Bounded by a watchdog: without deadlines on the lock this get would never return.
    auto taken = std::async(std::launch::async, [&] {
      for (int i = 0; i < 5; ++i)
        try {
          (void)q.get(20ms);
        } catch (const troupe::timeout_error&) {
        }
    });
    const bool returned = taken.wait_for(10s) == std::future_status::ready;
    kill_and_reap(writer); // also frees the lock if the writer held it
    taken.wait();
    ASSERT_TRUE(returned) << "round " << round << ": get(20ms) waited on a frozen lock holder";
    q.put(std::vector<char>(10, 'y'), 5s);
    q.unlink();
  }
}

/// Maps a queue's shared memory to write garbage into it, as a buggy or hostile process could.
struct raw_queue_memory {
  explicit raw_queue_memory(const std::string& name) {
    fd = shm_open(("/troupe.q." + name).c_str(), O_RDWR, 0);
    struct stat st {};
    fstat(fd, &st);
    size = static_cast<std::size_t>(st.st_size);
    base = static_cast<std::byte*>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  }
  ~raw_queue_memory() {
    munmap(base, size);
    close(fd);
  }
  /// The offset of `pattern` (a message's distinctive bytes) in the queue's memory.
  std::size_t find(const std::string& pattern) const {
    const auto* p =
      static_cast<const std::byte*>(memmem(base, size, pattern.data(), pattern.size()));
    return static_cast<std::size_t>(p - base);
  }
  int fd;
  std::size_t size;
  std::byte* base;
};

TEST(queue_crash, garbage_over_a_message_fails_that_message_only) {
  std::mt19937 bytes{7};
  for (int round = 0; round < rounds(); ++round) {
    const auto name = unique_name("scribble");
    auto q = troupe::queue<std::string>::create(name, {.max_messages = 8, .max_bytes = 4096});
    q.put("before-" + std::to_string(round));
    q.put("VICTIM-MESSAGE-PAYLOAD-" + std::string(64, 'v'));
    q.put("after-" + std::to_string(round));
    {
      raw_queue_memory raw{name};
      const auto at = raw.find("VICTIM");
      const auto length = 1 + bytes() % 60;
      for (std::size_t i = 0; i < length; ++i)
        raw.base[at - 20 + i + bytes() % 40] = static_cast<std::byte>(bytes());
    }
    EXPECT_EQ(q.get(), "before-" + std::to_string(round));
    EXPECT_THROW((void)q.get(), troupe::serialization_error) << "round " << round;
    EXPECT_EQ(q.get(), "after-" + std::to_string(round)) << "the queue goes on after the garbage";
    q.put("later");
    EXPECT_EQ(q.get(), "later");
    q.unlink();
  }
}

TEST(queue_crash, garbage_over_a_descriptor_loses_nothing_when_the_bytes_are_intact) {
  const auto name = unique_name("scribble-desc");
  auto q = troupe::queue<int>::create(name, {.max_messages = 8, .max_bytes = 4096});
  for (int i = 0; i < 4; ++i)
    q.put(i);
  {
    // The second message's descriptor is the pair (start, end) = (one blob, two blobs) in
    // bytes: find it and scribble over it.
    raw_queue_memory raw{name};
    const std::uint64_t blob = troupe::serialize(0).size();
    const std::uint64_t extent[2] = {blob, 2 * blob};
    auto* p = static_cast<std::byte*>(memmem(raw.base, raw.size, extent, sizeof extent));
    ASSERT_NE(p, nullptr);
    std::memset(p, 0xAB, 24);
  }
  // The message's extent is recovered from where the next one starts.
  EXPECT_EQ(q.get(), 0);
  EXPECT_EQ(q.get(), 1);
  EXPECT_EQ(q.get(), 2);
  EXPECT_EQ(q.get(), 3);
  q.put(4);
  EXPECT_EQ(q.get(), 4);
  q.unlink();
}

} // namespace
