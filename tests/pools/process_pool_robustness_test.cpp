// Process pools under the conditions that used to hang them or lose work: values larger than a
// worker's ring, bytes that do not decode, workers frozen mid-transfer or killed while the pool
// closes, streams read after close(), programs slow to start; and what users of Python's pools
// expect: their own exception types back, the worker's identity, shared tensors.
#include "process_test_support.hpp"

#include "troupe/actors/remote_exception.hpp"
#include "troupe/actors/tensor_serialization.hpp"
#include "troupe/pools/process_pool.hpp"
#include "troupe/queues/detail/byte_queue.hpp"
#include "troupe/queues/shared_tensor.hpp"

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xreducer.hpp>

#include <signal.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <random>
#include <ranges>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// A program whose static initialisation is slow (a large model loaded at start, say): the test
/// sets the variable before it starts a pool, so only its workers sleep here.
[[maybe_unused]] const bool slow_start_simulated = [] {
  if (const char* ms = std::getenv("TROUPE_TEST_SLOW_START_MS"))
    std::this_thread::sleep_for(std::chrono::milliseconds{std::atoi(ms)});
  return true;
}();

struct custom_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct unregistered_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

} // namespace

TROUPE_EXCEPTION(custom_failure);

TROUPE_TASK(length_of, [](std::string s) { return s.size(); });
TROUPE_TASK(megabytes_of_floats,
            [](int mb) { return std::vector<float>(static_cast<std::size_t>(mb) << 18, 1.5f); });
TROUPE_TASK(context_size_plus, [](xt::xarray<float>& context, int x) {
  return context.size() + static_cast<std::size_t>(x);
});
TROUPE_TASK(echo_bytes, [](std::vector<char> v) { return v; });
TROUPE_TASK(cube, [](int x) { return x * x * x; });
TROUPE_TASK(square_slowly, [](int x) {
  std::this_thread::sleep_for(std::chrono::milliseconds{2});
  return x * x;
});
TROUPE_TASK(throws_custom,
            [](int x) -> int { throw custom_failure("custom " + std::to_string(x)); });
TROUPE_TASK(throws_unregistered, [](int) -> int { throw unregistered_failure("who am I"); });
TROUPE_TASK(whoami, [](int) {
  std::this_thread::sleep_for(std::chrono::milliseconds{1}); // long enough for both to serve
  const auto me = troupe::this_worker();
  return std::pair<int, int>{me ? static_cast<int>(me->index) : -1, me ? me->pid : -1};
});
TROUPE_TASK(sum_of_shared, [](troupe::shared_tensor<float> t) {
  return static_cast<double>(xt::sum(t.view())());
});
TROUPE_TASK(shared_filled, [](int n) {
  troupe::shared_tensor<float> t{{static_cast<std::size_t>(n)}};
  t.view().fill(2.f);
  return t;
});

/// Puts bytes that decode as nothing on this worker's own reply queue, as a scribbling bug in
/// the worker might: the pool must fail the work, not hang on it.
TROUPE_TASK(scribble_on_reply_ring, [](int) {
  std::ifstream cmdline{"/proc/self/cmdline"};
  std::string arg;
  while (std::getline(cmdline, arg, '\0') && arg.rfind("--troupe-worker=", 0) != 0) {
  }
  const auto stem = arg.substr(std::string{"--troupe-worker="}.size(), arg.find(',') - 16);
  troupe::detail::byte_queue ring{stem + "-rep",
                                  troupe::detail::byte_queue::mode::open,
                                  {},
                                  troupe::detail::type_tag("N6troupe6detail11reply_batchE"),
                                  "reply_batch"};
  const std::vector<std::byte> garbage(64, std::byte{0xAB});
  ring.put(garbage, std::nullopt);
  return 0;
});

namespace {

// ThreadSanitizer runs these 5-15x slower: the tests that move gigabytes move less there (still
// more than a worker's ring holds) and freeze fewer rounds.
#if defined(__SANITIZE_THREAD__)
constexpr bool under_tsan = true;
#else
constexpr bool under_tsan = false;
#endif

using troupe::testing::iota;
using troupe::testing::process_pool_test;
using troupe::testing::returns_within;
using troupe::testing::start_busy_task;
using namespace std::chrono_literals;

TEST_F(process_pool_test, values_larger_than_a_workers_ring_travel_both_ways) {
  troupe::process_pool pool{rt, {.workers = 2}};
  returns_within(120s, "large values", [&] {
    // A worker's rings hold 64 MiB: one value over that, and batches over it.
    EXPECT_EQ(pool.apply(length_of, std::string(80 << 20, 'a')), 80u << 20);
    // 16 chunks of 5 MiB would share one message (80 MiB); 16 items of 5 MiB in one chunk.
    const std::vector<std::string> five_mib(20, std::string(5 << 20, 'b'));
    EXPECT_EQ(pool.map(length_of, five_mib, 1), std::vector<std::size_t>(20, 5u << 20));
    EXPECT_EQ(pool.map(length_of, five_mib, 16), std::vector<std::size_t>(20, 5u << 20));
    const auto floats = pool.apply(megabytes_of_floats, 80);
    ASSERT_EQ(floats.size(), 80u << 18);
    EXPECT_EQ(floats.back(), 1.5f);
  });
}

TEST_F(process_pool_test, contexts_larger_than_a_workers_ring_reach_their_workers) {
  troupe::collect_orphan_segments();
  std::set<int> workers;
  returns_within(120s, "100 MB contexts", [&] {
    const xt::xarray<float> context = xt::ones<float>({25u << 20}); // 100 MiB each
    troupe::ctx_process_pool<xt::xarray<float>> pool{rt, {context, context}};
    EXPECT_EQ(pool.map(context_size_plus, std::vector<int>{1, 2}, 1),
              (std::vector<std::size_t>{(25u << 20) + 1, (25u << 20) + 2}));
    for (int pid : pool.worker_pids())
      workers.insert(pid);
  });
  EXPECT_EQ(troupe::testing::shm_objects_of(workers), 0) << "the pool left objects in /dev/shm";
}

TEST_F(process_pool_test, max_message_bytes_fails_only_the_item_that_cannot_travel) {
  troupe::process_pool pool{rt, {.workers = 1, .max_message_bytes = 1 << 20}};
  auto stream =
    pool.imap(length_of, std::vector<std::string>{"a", std::string(2 << 20, 'x'), "bc"});
  EXPECT_EQ(stream.next(), 1u);
  try {
    (void)stream.next();
    FAIL() << "an argument over max_message_bytes was sent";
  } catch (const troupe::capacity_error& e) {
    EXPECT_NE(std::string{e.what()}.find("max_message_bytes (1 MiB)"), std::string::npos)
      << e.what();
    EXPECT_NE(std::string{e.what()}.find("(20971"), std::string::npos) << e.what(); // its size
  }
  EXPECT_EQ(stream.next(), 2u) << "the items around it go on";
  try {
    (void)pool.apply(megabytes_of_floats, 2);
    FAIL() << "a result over max_message_bytes came back";
  } catch (const troupe::capacity_error& e) {
    EXPECT_NE(std::string{e.what()}.find("max_message_bytes is 1 MiB"), std::string::npos)
      << e.what();
    ASSERT_NE(troupe::origin_of(e), nullptr) << "the worker refused it";
  }
  EXPECT_EQ(pool.apply(length_of, std::string(100, 'y')), 100u) << "the worker goes on";
  EXPECT_THROW((troupe::process_pool{rt, {.max_message_bytes = 100}}), troupe::invalid_argument);
}

TEST_F(process_pool_test, undecodable_bytes_on_a_reply_ring_fail_the_work_instead_of_hanging) {
  troupe::process_pool pool{rt, {.workers = 1}};
  auto scribbled = pool.apply_async(scribble_on_reply_ring, 0);
  returns_within(30s, "the scribbled reply",
                 [&] { EXPECT_THROW((void)scribbled.get(), troupe::serialization_error); });
  EXPECT_EQ(pool.apply(length_of, std::string(7, 'z')), 7u) << "a new worker took the slot";
}

TEST_F(process_pool_test, a_worker_frozen_while_large_values_travel_is_lost_not_waited_on) {
  std::mt19937 rng{42};
  troupe::process_pool pool{rt, {.workers = 1, .heartbeat_timeout = 300ms}};
  for (int round = 0; round < (under_tsan ? 3 : 8); ++round) {
    std::vector<std::vector<char>> values;
    for (int i = 0; i < (under_tsan ? 20 : 40); ++i)
      values.emplace_back((512u << 10) + rng() % (3u << 19), 'v'); // 512 KiB - 2 MiB
    (void)pool.apply(length_of, std::string{}); // a worker is serving
    const auto pids = pool.worker_pids();
    ASSERT_EQ(pids.size(), 1u);
    auto result = pool.map_async(echo_bytes, values, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 40));
    kill(pids[0], SIGSTOP);
    returns_within(30s, "map with a frozen worker, round " + std::to_string(round), [&] {
      try {
        EXPECT_EQ(result.get(), values);
      } catch (const troupe::worker_lost& e) {
        EXPECT_NE(std::string{e.what()}.find("heartbeat"), std::string::npos) << e.what();
      }
    });
    kill(pids[0], SIGKILL); // already killed by the pool; makes sure of it
  }
}

TEST_F(process_pool_test, a_worker_killed_while_the_pool_closes_does_not_hang_join) {
  troupe::process_pool pool{rt, {.workers = 1}};
  auto [busy, pid] = start_busy_task(pool, "close-kill");
  ASSERT_GT(pid, 0);
  auto after = pool.map_async(square_slowly, iota(20), 1);
  pool.close();
  kill(pid, SIGKILL);
  returns_within(30s, "join after a worker died while closing", [&] { pool.join(); });
  EXPECT_THROW((void)busy.get(), troupe::worker_lost);
  EXPECT_EQ(after.get().size(), 20u) << "the work queued behind it ran on the replacement";
}

TEST_F(process_pool_test, a_worker_killed_while_the_pool_terminates_does_not_hang_join) {
  troupe::process_pool pool{rt, {.workers = 2}};
  auto [busy, pid] = start_busy_task(pool, "terminate-kill");
  ASSERT_GT(pid, 0);
  auto queued = pool.map_async(square_slowly, iota(200), 1);
  kill(pid, SIGKILL);
  pool.terminate();
  returns_within(30s, "join after a worker died while terminating", [&] { pool.join(); });
  EXPECT_THROW((void)busy.get(), troupe::error);
  EXPECT_THROW((void)queued.get(), troupe::error);
}

TEST_F(process_pool_test, reading_a_stream_after_close_does_not_throttle_join) {
  troupe::process_pool pool{rt, {.workers = 2}};
  auto stream = pool.imap(square_slowly, iota(500)); // most are still to start at close()
  EXPECT_EQ(stream.next(), 0);
  pool.close();
  for (int i = 1; i < 10; ++i)
    EXPECT_EQ(stream.next(), i * i);
  returns_within(60s, "join with a stream still open", [&] { pool.join(); });
}

TEST_F(process_pool_test, a_program_slow_to_start_is_not_taken_for_frozen) {
  setenv("TROUPE_TEST_SLOW_START_MS", "2500", 1);
  {
    troupe::process_pool pool{rt, {.workers = 1}}; // heartbeat_timeout 2 s < 2.5 s of start-up
    EXPECT_EQ(pool.apply(cube, 3), 27);
  }
  {
    troupe::process_pool impatient{rt, {.workers = 1, .startup_timeout = 500ms}};
    try {
      (void)impatient.apply(cube, 3);
      FAIL() << "a worker that never started ran the task";
    } catch (const troupe::worker_lost& e) {
      EXPECT_NE(std::string{e.what()}.find("did not start within the startup_timeout"),
                std::string::npos)
        << e.what();
    }
  }
  unsetenv("TROUPE_TEST_SLOW_START_MS");
  EXPECT_THROW((troupe::process_pool{rt, {.startup_timeout = 0ms}}), troupe::invalid_argument);
}

TEST_F(process_pool_test, imap_pulls_an_endless_input_as_it_goes) {
  troupe::process_pool pool{rt, {.workers = 2}};
  auto pulled = std::make_shared<std::atomic<int>>(0);
  auto naturals = std::views::iota(0) | std::views::transform([pulled](int x) {
                    ++*pulled;
                    return x;
                  });
  {
    auto stream = pool.imap(cube, std::move(naturals));
    for (int i = 0; i < 200; ++i)
      ASSERT_EQ(stream.next(), i * i * i);
    EXPECT_LE(pulled->load(), 200 + 64 + 16);
  }
  std::set<int> unordered;
  for (int y : pool.imap_unordered(cube, std::views::iota(0, 300) |
                                           std::views::transform([](int x) { return x; })))
    unordered.insert(y);
  EXPECT_EQ(unordered.size(), 300u);
  EXPECT_EQ(*unordered.rbegin(), 299 * 299 * 299);
}

TEST_F(process_pool_test, registered_exception_types_come_back_as_themselves) {
  troupe::process_pool pool{rt, {.workers = 1}};
  try {
    (void)pool.apply(throws_custom, 5);
    FAIL() << "expected custom_failure";
  } catch (const custom_failure& e) {
    EXPECT_STREQ(e.what(), "custom 5");
    ASSERT_NE(troupe::origin_of(e), nullptr);
    EXPECT_NE(troupe::origin_of(e)->worker().find("pid"), std::string::npos);
  }
  try {
    (void)pool.apply(throws_unregistered, 0);
    FAIL() << "expected task_error";
  } catch (const troupe::task_error& e) {
    EXPECT_NE(e.type_name().find("unregistered_failure"), std::string::npos) << e.type_name();
    EXPECT_EQ(e.message(), "who am I");
  }
}

TEST_F(process_pool_test, a_task_knows_its_worker_and_the_pool_lists_worker_pids) {
  troupe::process_pool pool{rt, {.workers = 2}};
  std::set<std::pair<int, int>> seen;
  for (const auto& who : pool.map(whoami, iota(200), 1))
    seen.insert(who);
  std::set<int> indices, pids;
  for (const auto& [index, pid] : seen) {
    indices.insert(index);
    pids.insert(pid);
  }
  EXPECT_EQ(indices, (std::set<int>{0, 1}));
  const auto listed = pool.worker_pids();
  EXPECT_EQ(std::set<int>(listed.begin(), listed.end()), pids);
  EXPECT_FALSE(troupe::this_worker().has_value()) << "outside a task there is no worker";
}

TEST_F(process_pool_test, stats_and_progress_cover_process_workers_and_their_replacements) {
  // One worker: the map after the kill can only run once the slot has been replaced.
  troupe::process_pool pool{rt, {.workers = 1}};
  std::atomic<std::size_t> last_done{0};
  std::atomic<bool> finished{false};
  const auto report = troupe::progress::callback(
    [&](const troupe::progress_update& u) {
      last_done = u.done;
      finished = finished || u.finished;
    },
    1ms);
  EXPECT_EQ(pool.map(cube, iota(300), {1, report}).size(), 300u);
  EXPECT_TRUE(finished.load());
  EXPECT_EQ(last_done.load(), 300u);
  auto [doomed, pid] = start_busy_task(pool, "stats");
  ASSERT_GT(pid, 0);
  kill(pid, SIGKILL);
  EXPECT_THROW((void)doomed.get(10s), troupe::worker_lost);
  (void)pool.map(cube, iota(50), 1); // the replacement serves
  const auto stats = pool.stats();
  ASSERT_EQ(stats.size(), 1u);
  std::size_t tasks = 0, failed = 0, replacements = 0;
  std::set<int> pids;
  for (const auto& w : stats) {
    tasks += w.tasks;
    failed += w.items_failed;
    replacements += w.replacements;
    if (w.pid)
      pids.insert(*w.pid);
  }
  EXPECT_GE(tasks, 350u);
  EXPECT_EQ(failed, 1u) << "the task lost with its worker";
  EXPECT_EQ(replacements, 1u);
  const auto listed = pool.worker_pids();
  EXPECT_EQ(pids, std::set<int>(listed.begin(), listed.end()));
  EXPECT_EQ(pids.count(pid), 0u) << "the killed worker is no longer listed";
}

TEST_F(process_pool_test, shared_tensors_cross_a_process_pool_both_ways) {
  troupe::collect_orphan_segments();
  std::set<int> workers;
  {
    troupe::process_pool pool{rt, {.workers = 1}};
    troupe::shared_tensor<float> t{{1000, 100}};
    t.view().fill(0.5f);
    EXPECT_EQ(pool.apply(sum_of_shared, t), 50000.0);
    const auto made = pool.apply(shared_filled, 1 << 20);
    EXPECT_EQ(made.shape(), std::vector<std::size_t>{1u << 20});
    EXPECT_EQ(made.view()(12345), 2.f);
    for (int pid : pool.worker_pids())
      workers.insert(pid);
  }
  EXPECT_EQ(troupe::testing::shm_objects_of(workers), 0) << "every tensor's segment was freed";
}

} // namespace
