// Benchmarks that need peers start this program again, told their part by one environment
// variable.
#pragma once

#include <spawn.h>
#include <unistd.h> // environ (g++ defines _GNU_SOURCE)

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace troupe::bench {

/// Starts this program again with `entry` ("NAME=value") added to its environment, and each
/// of `descriptors` (child's number, this process's descriptor) open in it; aborts if it
/// cannot.
inline pid_t spawn_self(const std::string& entry,
                        const std::vector<std::pair<int, int>>& descriptors = {}) {
  std::vector<std::string> entries;
  for (char** at = environ; *at != nullptr; ++at)
    entries.emplace_back(*at);
  entries.push_back(entry);
  std::vector<char*> envp;
  for (auto& each : entries)
    envp.push_back(each.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  for (const auto& [child, mine] : descriptors)
    ::posix_spawn_file_actions_adddup2(&actions, mine, child);
  char program[] = "/proc/self/exe";
  char* argv[] = {program, nullptr};
  pid_t pid = 0;
  const int failed = ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv, envp.data());
  ::posix_spawn_file_actions_destroy(&actions);
  if (failed != 0)
    std::abort();
  return pid;
}

} // namespace troupe::bench
