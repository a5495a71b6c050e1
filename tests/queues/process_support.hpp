// Child processes for the queue tests: fork, run a function, exit with its status.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>

namespace troupe::testing {

/// This test process and the children it forked: the processes whose shared-memory objects
/// the tests count (other troupe programs on the host may be making their own meanwhile).
inline std::set<pid_t>& family() {
  static std::set<pid_t> pids{getpid()};
  return pids;
}

/// Runs `body` in a forked child, which exits 0 if it returns normally and 1 if it throws.
inline pid_t spawn(const std::function<void()>& body) {
  const pid_t pid = fork();
  if (pid > 0)
    family().insert(pid);
  if (pid == 0) {
    int status = 0;
    try {
      body();
    } catch (...) {
      status = 1;
    }
    _exit(status);
  }
  return pid;
}

/// Waits for `pid` at most `timeout`; its exit status, -signal if killed, nullopt if still
/// running (then it is killed, so no test leaves a process behind).
inline std::optional<int> wait_for(pid_t pid, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    if (std::chrono::steady_clock::now() > until) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  }
}

inline void kill_and_reap(pid_t pid) {
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
}

/// Whether a troupe object's name says that process `pid` made it: a segment
/// (troupe.seg.<pid>.) or a queue named by unique_name() there (...-<pid>-...).
inline bool made_by(const std::string& name, pid_t pid) {
  const auto id = std::to_string(pid);
  return name.rfind("troupe.seg." + id + ".", 0) == 0 ||
         (name.rfind("troupe.q.", 0) == 0 && name.find("-" + id + "-") != std::string::npos);
}

/// This test's troupe shared-memory objects in /dev/shm now.
inline int troupe_shm_entries() {
  int count = 0;
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      for (pid_t pid : family())
        if (made_by(name, pid)) {
          ++count;
          break;
        }
    }
    closedir(dir);
  }
  return count;
}

/// A queue name no other test run uses.
inline std::string unique_name(const std::string& stem) {
  static std::mt19937_64 rng{std::random_device{}()};
  return stem + "-" + std::to_string(getpid()) + "-" + std::to_string(rng() % 1000000);
}

} // namespace troupe::testing
