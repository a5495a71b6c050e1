#include "troupe/actors/actor.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/actors/runtime.hpp"

#include "../queues/process_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

struct napper {
  void nap(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds{ms}); }
};

std::vector<char*> argv_of(std::vector<std::string>& args) {
  std::vector<char*> out;
  for (auto& a : args)
    out.push_back(a.data());
  out.push_back(nullptr);
  return out;
}

TEST(runtime, starts_and_stops_with_defaults) {
  troupe::runtime rt;
  // One scheduler thread on two cores or fewer (see default_scheduler_threads), else two.
  EXPECT_EQ(rt.scheduler_threads(), std::thread::hardware_concurrency() <= 2 ? 1 : 2);
}

TEST(runtime, takes_scheduler_threads_from_options) {
  troupe::runtime rt{troupe::runtime_options{.scheduler_threads = 3}};
  EXPECT_EQ(rt.scheduler_threads(), 3);
}

TEST(runtime, command_line_flag_overrides_options_and_other_arguments_are_ignored) {
  std::vector<std::string> args{"prog", "--verbose", "input.txt", "--troupe-scheduler-threads=1"};
  auto argv = argv_of(args);
  troupe::runtime rt{static_cast<int>(args.size()), argv.data(),
                     troupe::runtime_options{.scheduler_threads = 4}};
  EXPECT_EQ(rt.scheduler_threads(), 1);
}

TEST(runtime, rejects_a_bad_thread_count_naming_it) {
  try {
    troupe::runtime rt{troupe::runtime_options{.scheduler_threads = 0}};
    FAIL() << "expected troupe::invalid_argument";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("scheduler_threads"), std::string::npos);
  }
  std::vector<std::string> args{"prog", "--troupe-scheduler-threads=lots"};
  auto argv = argv_of(args);
  try {
    troupe::runtime rt{static_cast<int>(args.size()), argv.data()};
    FAIL() << "expected troupe::invalid_argument";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("lots"), std::string::npos);
  }
}

TEST(runtime, rejects_an_unknown_troupe_flag_naming_it) {
  std::vector<std::string> args{"prog", "--troupe-wrokers=3"};
  auto argv = argv_of(args);
  try {
    troupe::runtime rt{static_cast<int>(args.size()), argv.data()};
    FAIL() << "expected troupe::invalid_argument";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("--troupe-wrokers=3"), std::string::npos);
  }
}

TEST(runtime, rejects_a_join_flag_without_an_address) {
  std::vector<std::string> args{"prog", "--troupe-join"};
  auto argv = argv_of(args);
  try {
    troupe::runtime rt{static_cast<int>(args.size()), argv.data()};
    FAIL() << "expected troupe::invalid_argument";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("--troupe-join needs HOST:PORT"), std::string::npos);
  }
}

// CAF's actor system stops its clock before it waits for detached actors' threads, and each
// ending actor hands the clock one last event through a 64-slot ring: a runtime stopped while
// many of its actors were still ending waited for ring room forever (a world member hosting
// 1,024 actors hung so on a loaded machine). Each round ends 1,024 actors at once as the
// runtime stops, beside threads that keep the cores busy, as the loaded machine did.
TEST(runtime, stops_while_a_thousand_actors_end_at_once_on_a_busy_machine) {
  const pid_t child = troupe::testing::spawn([] {
    std::atomic<bool> done{false};
    std::vector<std::jthread> busy;
    for (int i = 0; i < 4; ++i)
      busy.emplace_back([&done] {
        while (!done.load(std::memory_order_relaxed)) {
        }
      });
    for (int round = 0; round < 8; ++round) {
      troupe::runtime rt;
      std::vector<troupe::actor<napper>> actors;
      for (int i = 0; i < 1024; ++i)
        actors.push_back(troupe::spawn<napper>(rt));
      for (auto& actor : actors)
        actor.tell(&napper::nap, 20);
      actors.clear(); // each ends after its nap, as the runtime stops
    }
    done = true;
  });
  EXPECT_EQ(troupe::testing::wait_for(child, 60s), std::optional<int>{0})
    << "nullopt: the runtime's stop hung";
}

} // namespace
