// A benchmark's peer processes are waited for with a deadline: one that hangs (a lost peer, a
// wedged connection) is killed and reported, rather than holding the benchmark for ever.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

namespace troupe::bench {

/// Waits up to `limit` for child `pid` to end; past it kills it (SIGKILL), says so on stderr,
/// and reaps it. Returns its wait status, or -1 when it had to be killed or was no child.
inline int reap_within(pid_t pid, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  int status = 0;
  for (;;) {
    const pid_t ended = ::waitpid(pid, &status, WNOHANG);
    if (ended == pid)
      return status;
    if (ended < 0)
      return -1;
    if (std::chrono::steady_clock::now() >= until)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  std::fprintf(stderr, "bench: peer process %d did not end within %lld s: killed\n",
               static_cast<int>(pid), static_cast<long long>(limit.count()));
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

/// Whether a status reap_within returned is a clean exit.
inline bool exited_cleanly(int status) {
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

} // namespace troupe::bench
