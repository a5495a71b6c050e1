// Benchmarks that need peers start this program again, told their part by one environment
// variable.
#pragma once

#include <spawn.h>
#include <unistd.h> // environ (g++ defines _GNU_SOURCE)

#include <cstdlib>
#include <string>
#include <vector>

namespace troupe::bench {

/// Starts this program again with `entry` ("NAME=value") added to its environment; aborts if
/// it cannot.
inline pid_t spawn_self(const std::string& entry) {
  std::vector<std::string> entries;
  for (char** at = environ; *at != nullptr; ++at)
    entries.emplace_back(*at);
  entries.push_back(entry);
  std::vector<char*> envp;
  for (auto& each : entries)
    envp.push_back(each.data());
  envp.push_back(nullptr);
  char program[] = "/proc/self/exe";
  char* argv[] = {program, nullptr};
  pid_t pid = 0;
  if (::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, envp.data()) != 0)
    std::abort();
  return pid;
}

} // namespace troupe::bench
