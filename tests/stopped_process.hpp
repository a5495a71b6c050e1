// Stopping a process in a test, and knowing it stopped. kill(pid, SIGSTOP) returns before the
// process stops: the kernel wakes one of its threads to take the signal, and only that thread,
// once a core runs it, stops the others. Until then the rest go on, so a request sent right after
// kill() may still be answered (a paused etcd server answered a put 0.6 ms after it, in about 1
// run of 30 on 2 cores).
#pragma once

#include "eventually.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/types.h>

namespace troupe::testing {

/// Whether every thread of process `pid` is stopped (state T in /proc/PID/task/TID/stat).
inline bool all_threads_stopped(pid_t pid) {
  std::error_code error;
  std::filesystem::directory_iterator tasks{"/proc/" + std::to_string(pid) + "/task", error};
  if (error)
    return false;
  bool any = false;
  for (const auto& task : tasks) {
    std::ifstream stat{task.path() / "stat"};
    std::string line;
    std::getline(stat, line);
    const auto after_name = line.rfind(')'); // the name may hold spaces and parentheses
    if (after_name == std::string::npos || line.size() <= after_name + 2 ||
        line[after_name + 2] != 'T')
      return false;
    any = true;
  }
  return any;
}

/// Stops process `pid` (SIGSTOP) and returns once all its threads are stopped; false if they
/// are not within `limit`.
inline bool stop_process(pid_t pid, std::chrono::milliseconds limit = std::chrono::seconds{5}) {
  if (pid <= 0 || ::kill(pid, SIGSTOP) != 0)
    return false;
  return eventually([pid] { return all_threads_stopped(pid); }, limit,
                    std::chrono::milliseconds{1});
}

} // namespace troupe::testing
