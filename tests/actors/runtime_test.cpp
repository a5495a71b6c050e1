#include "troupe/actors/error.hpp"
#include "troupe/actors/runtime.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace {

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

} // namespace
