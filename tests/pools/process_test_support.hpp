// Helpers shared by the process pool tests (one binary, which is also the pools' worker program).
#pragma once

#include "troupe/actors/async_result.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/task.hpp"

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

/// Writes its process id to `path`, then sleeps: a busy worker the test can find and kill.
TROUPE_TASK(busy_until_killed, [](std::string path) {
  std::ofstream{path} << getpid();
  std::this_thread::sleep_for(std::chrono::seconds{30});
  return 0;
});

namespace troupe::testing {

using namespace std::chrono_literals;

class process_pool_test : public ::testing::Test {
protected:
  troupe::runtime rt;
};

inline std::vector<int> iota(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = i;
  return v;
}

inline std::string temp_path(const std::string& stem) {
  return ::testing::TempDir() + stem + "-" + std::to_string(getpid()) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

inline int read_pid(const std::string& path) {
  for (int i = 0; i < 5000; ++i) {
    int pid = 0;
    if (std::ifstream in{path}; in >> pid && pid > 0) {
      std::remove(path.c_str());
      return pid;
    }
    std::this_thread::sleep_for(1ms);
  }
  return -1;
}

/// Starts busy_until_killed in one of the pool's workers; returns its result and that worker's
/// process id (-1 if it never started).
template <class Pool>
std::pair<troupe::async_result<int>, int> start_busy_task(Pool& pool, const std::string& stem) {
  const auto path = temp_path(stem);
  auto result = pool.apply_async(busy_until_killed, path);
  return {std::move(result), read_pid(path)};
}

/// Runs `body`, which must return within `limit`. A hang is the failure these tests look for:
/// it is reported at once and ends the test program (its workers die with it), rather than
/// leaving the suite to its timeout.
template <class Body>
void returns_within(std::chrono::seconds limit, const std::string& what, Body&& body) {
  auto done = std::async(std::launch::async, std::forward<Body>(body));
  if (done.wait_for(limit) != std::future_status::ready) {
    std::fprintf(stderr, "HANG: %s did not return within %lld s\n", what.c_str(),
                 static_cast<long long>(limit.count()));
    std::_Exit(1);
  }
  done.get();
}

/// troupe objects in /dev/shm made by this process or by the given (worker) processes: pool
/// rings are named after the pool's process, segments after their maker.
inline int shm_objects_of(std::set<int> pids) {
  pids.insert(getpid());
  int count = 0;
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      for (int pid : pids) {
        const auto id = std::to_string(pid);
        if (name.rfind("troupe.seg." + id + ".", 0) == 0 ||
            name.rfind("troupe.q.pool-" + id + "-", 0) == 0) {
          ++count;
          break;
        }
      }
    }
    closedir(dir);
  }
  return count;
}

} // namespace troupe::testing
