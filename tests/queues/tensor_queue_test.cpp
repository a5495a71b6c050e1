// Large tensors through queues: copy mode (a segment per tensor, freed on receipt) and shared
// mode (shared_tensor: the same memory in both processes), and segments that never leak.
#include "process_support.hpp"

#include "troupe/actors/tensor_serialization.hpp"
#include "troupe/queues/queue.hpp"
#include "troupe/queues/shared_tensor.hpp"

#include <gtest/gtest.h>
#include <xtensor/xarray.hpp>
#include <xtensor/xrandom.hpp>

#include <csignal>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace {

using namespace troupe::testing;
using namespace std::chrono_literals;

TEST(tensor_queue, a_large_tensor_crosses_processes_through_a_segment_freed_on_receipt) {
  troupe::collect_orphan_segments(); // whatever an earlier, aborted run left
  const int before = troupe_shm_entries();
  const auto name = unique_name("big");
  auto q =
    troupe::queue<xt::xarray<float>>::create(name, {.max_bytes = 1 << 20, .spare_segments = 0});
  const xt::xarray<float> big = xt::random::rand<float>({512, 1024}); // 2 MiB > the ring
  const auto child = spawn([&] {
    auto out = troupe::queue<xt::xarray<float>>::open(name);
    out.put(big);
    out.put(xt::xarray<float>{1.f, 2.f}); // small ones stay in the ring
  });
  ASSERT_EQ(wait_for(child, 30s), 0);
  EXPECT_EQ(troupe_shm_entries(), before + 2) << "the queue and the one segment in flight";
  EXPECT_EQ(q.get(), big);
  EXPECT_EQ(troupe_shm_entries(), before + 1) << "the segment is freed once received";
  EXPECT_EQ(q.get(), (xt::xarray<float>{1.f, 2.f}));
  q.unlink();
  EXPECT_EQ(troupe_shm_entries(), before);
}

TEST(tensor_queue, received_segments_are_reused_by_later_puts_and_go_with_the_queue) {
  troupe::collect_orphan_segments();
  const int before = troupe_shm_entries();
  auto q = troupe::queue<xt::xarray<float>>::create(unique_name("spares"), {.spare_segments = 2});
  const xt::xarray<float> big = xt::ones<float>({1 << 18}); // 1 MiB
  for (int round = 0; round < 20; ++round) {
    q.put(big * static_cast<float>(round));
    EXPECT_EQ(q.get(), big * static_cast<float>(round));
  }
  EXPECT_EQ(troupe_shm_entries(), before + 2) << "one segment, reused 19 times, and the queue";
  q.unlink();
  EXPECT_EQ(troupe_shm_entries(), before);
}

TEST(tensor_queue, get_into_reuses_the_receivers_array_when_the_shape_matches) {
  auto q = troupe::queue<xt::xarray<float>>::create(unique_name("into"));
  xt::xarray<float> into = xt::zeros<float>({256, 512});
  const float* storage = into.data();
  for (int round = 1; round <= 3; ++round) {
    q.put(xt::ones<float>({256, 512}) * static_cast<float>(round));
    q.get_into(into, 1s);
    EXPECT_EQ(into, xt::ones<float>({256, 512}) * static_cast<float>(round));
    EXPECT_EQ(into.data(), storage) << "same shape: no new allocation";
  }
  q.put(xt::ones<float>({3}));
  q.get_into(into);
  EXPECT_EQ(into, xt::ones<float>({3})) << "another shape: resized";
  EXPECT_THROW(q.get_into(into, 10ms), troupe::timeout_error);
  q.unlink();
}

/// The VmFlags of this process's mapping that holds `address` ("" if none).
std::string mapping_flags(const void* address) {
  std::ifstream smaps{"/proc/self/smaps"};
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t from = 0, to = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &from, &to) == 2 && line.find(':') > line.find(' '))
      inside = from <= at && at < to;
    else if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}

TEST(tensor_queue, a_large_received_array_is_advised_to_huge_pages_before_the_copy) {
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage"))
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  auto q = troupe::queue<xt::xarray<float>>::create(unique_name("hugepages"));
  const xt::xarray<float> big = xt::ones<float>({4u << 20}); // 16 MiB
  q.put(big);
  const auto got = q.get();
  EXPECT_EQ(got, big);
  // A fresh array faulted in 4 KiB at a time cost 30 ms at 64 MiB here, 7 ms in 2 MiB pages.
  EXPECT_NE(mapping_flags(got.data() + got.size() / 2).find(" hg"), std::string::npos)
    << mapping_flags(got.data() + got.size() / 2);
  q.unlink();
}

TEST(tensor_queue, unreceived_segments_go_with_their_queue) {
  troupe::collect_orphan_segments(); // whatever an earlier, aborted run left
  const int before = troupe_shm_entries();
  auto q = troupe::queue<xt::xarray<double>>::create(unique_name("left"));
  q.put(xt::zeros<double>({256, 256}));
  q.put(xt::zeros<double>({256, 256}));
  EXPECT_EQ(troupe_shm_entries(), before + 3);
  q.unlink();
  EXPECT_EQ(troupe_shm_entries(), before);
}

TEST(tensor_queue, a_shared_tensor_is_the_same_memory_in_sender_and_receiver) {
  troupe::collect_orphan_segments(); // whatever an earlier, aborted run left
  const int before = troupe_shm_entries();
  const auto name = unique_name("shared");
  auto q = troupe::queue<troupe::shared_tensor<float>>::create(name);
  auto back = troupe::queue<int>::create(name + "-ack");
  {
    troupe::shared_tensor<float> t{{1000, 1000}};
    t.view()(0, 0) = 1.5f;
    q.put(t);
    const auto child = spawn([&] {
      auto in = troupe::queue<troupe::shared_tensor<float>>::open(name);
      auto ack = troupe::queue<int>::open(name + "-ack");
      auto received = in.get(10s);
      if (received.view()(0, 0) != 1.5f || received.shape() != std::vector<std::size_t>{1000, 1000})
        throw std::runtime_error("not the sender's tensor");
      received.view()(999, 999) = 7.f; // visible to the sender: same memory
      ack.put(1);
    });
    EXPECT_EQ(back.get(10s), 1);
    EXPECT_EQ(wait_for(child, 10s), 0);
    EXPECT_EQ(t.view()(999, 999), 7.f);
    EXPECT_EQ(troupe_shm_entries(), before + 3) << "two queues and the tensor's segment";
  }
  EXPECT_EQ(troupe_shm_entries(), before + 2) << "the last holder dropped it";
  q.unlink();
  back.unlink();
  EXPECT_EQ(troupe_shm_entries(), before);
}

TEST(tensor_queue, a_receiver_that_crashes_holding_a_shared_tensor_leaks_nothing) {
  troupe::collect_orphan_segments(); // whatever an earlier, aborted run left
  const int before = troupe_shm_entries();
  const auto name = unique_name("crash-holder");
  auto q = troupe::queue<troupe::shared_tensor<std::int32_t>>::create(name);
  auto ack = troupe::queue<int>::create(name + "-ack");
  {
    troupe::shared_tensor<std::int32_t> t{{4096, 256}};
    q.put(t);
  } // the sender let go: the message (then the receiver) is the only holder
  const auto child = spawn([&] {
    auto in = troupe::queue<troupe::shared_tensor<std::int32_t>>::open(name);
    auto held = in.get(10s);
    troupe::queue<int>::open(name + "-ack").put(1);
    pause(); // holds the tensor until killed
  });
  EXPECT_EQ(ack.get(10s), 1);
  EXPECT_EQ(troupe_shm_entries(), before + 3);
  kill_and_reap(child);
  EXPECT_EQ(troupe::collect_orphan_segments(), 1u) << "its only holder is dead";
  q.unlink();
  ack.unlink();
  EXPECT_EQ(troupe_shm_entries(), before);
}

TEST(tensor_queue, a_segment_whose_creator_died_before_sending_is_collected) {
  troupe::collect_orphan_segments(); // whatever an earlier, aborted run left
  const int before = troupe_shm_entries();
  const auto child = spawn([] {
    auto segment = troupe::shm_segment::create(1 << 20);
    pause();
  });
  for (int i = 0; i < 1000 && troupe_shm_entries() == before; ++i)
    std::this_thread::sleep_for(1ms);
  EXPECT_EQ(troupe_shm_entries(), before + 1);
  EXPECT_EQ(troupe::collect_orphan_segments(), 0u) << "its creator is alive";
  kill_and_reap(child);
  EXPECT_EQ(troupe::collect_orphan_segments(), 1u);
  EXPECT_EQ(troupe_shm_entries(), before);
}

TEST(tensor_queue, without_spares_every_received_segment_is_freed_at_once) {
  troupe::collect_orphan_segments();
  const int before = troupe_shm_entries();
  auto q = troupe::queue<xt::xarray<float>>::create(unique_name("nospare"), {.spare_segments = 0});
  const xt::xarray<float> big = xt::ones<float>({2u << 20}); // 8 MiB
  for (int round = 0; round < 20; ++round) {
    q.put(big);
    EXPECT_EQ(q.get(5s), big);
    EXPECT_EQ(troupe_shm_entries(), before + 1) << "round " << round << ": only the queue is left";
  }
  q.unlink();
}

TEST(tensor_queue, a_queue_with_a_name_of_the_longest_valid_length_keeps_its_segments) {
  troupe::collect_orphan_segments();
  auto name = unique_name("long");
  name += std::string(troupe::detail::max_queue_name_length - name.size(), 'n');
  auto q = troupe::queue<xt::xarray<float>>::create(name);
  const xt::xarray<float> big = xt::ones<float>({1u << 18});
  q.put(big);
  EXPECT_EQ(troupe::collect_orphan_segments(), 0u) << "the queue holding the segment is alive";
  EXPECT_EQ(q.get(5s), big);
  q.unlink();
}

TEST(tensor_queue, a_segment_whose_creator_died_while_making_it_is_collected) {
  troupe::collect_orphan_segments();
  const int before = troupe_shm_entries();
  // Killed at each step of creation: named but empty, sized but without its header's magic.
  for (const bool sized : {false, true}) {
    const auto child = spawn([sized] {
      const auto name = "/troupe.seg." + std::to_string(getpid()) + ".0.1";
      const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
      if (sized)
        (void)!ftruncate(fd, 1 << 20);
    });
    ASSERT_EQ(wait_for(child, 10s), 0);
  }
  EXPECT_EQ(troupe_shm_entries(), before + 2);
  EXPECT_EQ(troupe::collect_orphan_segments(), 2u);
  EXPECT_EQ(troupe_shm_entries(), before);
}

TEST(tensor_queue, a_queue_owned_by_its_creator_goes_when_the_creator_is_killed) {
  troupe::collect_orphan_segments();
  const int before = troupe_shm_entries();
  const auto owned = unique_name("owned"), named = unique_name("named");
  const auto child = spawn([&] {
    auto a = troupe::queue<xt::xarray<float>>::create(owned, {.owned_by_creator = true});
    auto b = troupe::queue<int>::create(named);
    a.put(xt::ones<float>({1u << 18})); // a segment the owned queue holds
    pause();
  });
  for (int i = 0; i < 5000 && troupe_shm_entries() < before + 3; ++i)
    std::this_thread::sleep_for(1ms);
  EXPECT_EQ(troupe::collect_orphan_segments(), 0u) << "the creator is alive";
  kill_and_reap(child);
  troupe::collect_orphan_segments();
  EXPECT_FALSE(troupe::shm_object_exists("troupe.q." + owned));
  EXPECT_TRUE(troupe::shm_object_exists("troupe.q." + named))
    << "a named queue outlives its creator";
  EXPECT_EQ(troupe_shm_entries(), before + 1) << "the owned queue's segment went with it";
  troupe::queue<int>::open(named).unlink();
}

TEST(tensor_queue, a_process_frozen_holding_a_segments_lock_blocks_nobody) {
  auto segment = troupe::shm_segment::create(4096);
  const auto name = segment.name();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const auto child = spawn([&] {
    // What a process frozen inside the holders' critical section leaves: the lock, held.
    const int fd = shm_open(("/" + name).c_str(), O_RDWR, 0);
    auto* base =
      static_cast<std::byte*>(mmap(nullptr, 16384, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    auto* holders_lock = reinterpret_cast<pthread_mutex_t*>(base + 16); // after magic and size
    pthread_mutex_lock(holders_lock);
    (void)!write(ready[1], "x", 1);
    raise(SIGSTOP);
  });
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  close(ready[1]);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW((void)troupe::shm_segment::open(name), troupe::timeout_error);
  EXPECT_EQ(troupe::collect_orphan_segments(), 0u) << "a segment locked by a live process stays";
  EXPECT_TRUE(segment.shared_with_others());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  kill_and_reap(child); // the robust lock passes to the next locker
  EXPECT_NO_THROW((void)troupe::shm_segment::open(name));
}

TEST(tensor_queue, a_shared_tensor_outside_a_queue_is_refused) {
  troupe::shared_tensor<float> t{{2, 2}};
  EXPECT_THROW((void)troupe::serialize(t), troupe::serialization_error);
}

} // namespace
