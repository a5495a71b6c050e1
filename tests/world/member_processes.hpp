// World tests start their other members themselves: this test program again, told by its
// environment which role to play (TROUPE_TEST_ROLE) and which member to be (TROUPE_RANK, ...).
// Every wait is bounded, and a member still running when its test ends is killed and reaped.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace troupe::testing {

/// A role: the body of a member process; its return value is the process's exit code.
using role = std::function<int()>;
std::map<std::string, role>& roles();

struct role_registration {
  role_registration(const std::string& name, role body) { roles().emplace(name, std::move(body)); }
};

#define TROUPE_ROLE(name)                                                                          \
  int role_##name();                                                                               \
  const ::troupe::testing::role_registration role_registered_##name{#name, role_##name};           \
  int role_##name()

/// A free TCP port on 127.0.0.1 (bound, read and released).
int free_port();

/// A member process running `role` with `environment` added to this process's.
class member_process {
public:
  member_process(const std::string& role, std::map<std::string, std::string> environment);
  member_process(member_process&& other) noexcept;
  member_process& operator=(member_process&&) = delete;
  ~member_process();

  int pid() const { return pid_; }
  /// Its exit code, or -1 if it is still running after `limit` (it is then killed), or 128+N
  /// if signal N ended it.
  int exit_code(std::chrono::milliseconds limit);
  void signal(int number);
  /// Stops it (SIGSTOP) and returns once all its threads are stopped; false if they are not
  /// within 5 s. A signal takes effect a moment after kill() returns, later on a loaded machine:
  /// a call made just after signal(SIGSTOP) may still be answered.
  bool freeze();
  /// Kills and reaps it, then unlinks the shared memory it left behind (its inboxes): what a
  /// killed member held is collected only once it is gone, and only when something looks.
  void kill_and_collect();

private:
  void kill_and_reap();

  int pid_ = -1;
};

/// The environment of member `rank` of a world of `size` at `address`, named "0", "1", ...
std::map<std::string, std::string> member_environment(int rank, int size, int port);

/// A temporary folder, removed with everything in it when this goes.
class temp_folder {
public:
  temp_folder();
  ~temp_folder();
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

} // namespace troupe::testing
