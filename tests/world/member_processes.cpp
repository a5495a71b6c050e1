#include "member_processes.hpp"
#include "../stopped_process.hpp"

#include "troupe/actors/network.hpp"
#include "troupe/queues/shm_segment.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

extern char** environ;

namespace troupe::testing {

std::map<std::string, role>& roles() {
  static std::map<std::string, role> all;
  return all;
}

int free_port() { return troupe::detail::free_loopback_port(); }

member_process::member_process(const std::string& role,
                               std::map<std::string, std::string> environment) {
  environment["TROUPE_TEST_ROLE"] = role;
  std::vector<std::string> entries;
  for (char** at = environ; *at != nullptr; ++at) {
    std::string entry{*at};
    if (!environment.contains(entry.substr(0, entry.find('='))))
      entries.push_back(std::move(entry));
  }
  for (const auto& [key, value] : environment)
    entries.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& entry : entries)
    envp.push_back(entry.data());
  envp.push_back(nullptr);
  char program[] = "/proc/self/exe";
  char* argv[] = {program, nullptr};
  if (::posix_spawn(&pid_, "/proc/self/exe", nullptr, nullptr, argv, envp.data()) != 0)
    throw std::runtime_error("cannot start a member process");
}

member_process::member_process(member_process&& other) noexcept : pid_(other.pid_) {
  other.pid_ = -1;
}

member_process::~member_process() { kill_and_reap(); }

void member_process::kill_and_reap() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

int member_process::exit_code(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (pid_ > 0) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill_and_reap();
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  return -1;
}

void member_process::signal(int number) {
  if (pid_ > 0)
    ::kill(pid_, number);
}

bool member_process::freeze() { return troupe::testing::stop_process(pid_); }

void member_process::kill_and_collect() {
  kill_and_reap();
  troupe::collect_orphan_segments();
}

std::map<std::string, std::string> member_environment(int rank, int size, int port) {
  return {{"TROUPE_RANK", std::to_string(rank)},
          {"TROUPE_WORLD_SIZE", std::to_string(size)},
          {"TROUPE_NAME", std::to_string(rank)},
          {"TROUPE_ADDRESS", "127.0.0.1:" + std::to_string(port)}};
}

temp_folder::temp_folder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "troupe-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("cannot make a temporary folder");
  path_ = pattern;
}

temp_folder::~temp_folder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

} // namespace troupe::testing

int main(int argc, char** argv) {
  if (const char* role = std::getenv("TROUPE_TEST_ROLE")) {
    auto at = troupe::testing::roles().find(role);
    if (at == troupe::testing::roles().end()) {
      std::cerr << "no role " << role << "\n";
      return 99;
    }
    try {
      return at->second();
    } catch (const std::exception& e) {
      std::cerr << "role " << role << " failed: " << e.what() << "\n";
      return 98;
    }
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
