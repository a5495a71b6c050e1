// Writing to a socket whose peer has gone raises SIGPIPE, which kills a process by default.
// OpenSSL writes through write(2), which cannot be told MSG_NOSIGNAL, so every thread that
// writes TLS records blocks the signal for itself: a blocked SIGPIPE stays pending, harmless.
// The process's disposition for SIGPIPE is left to the program. Not installed.
#pragma once

#include <csignal>
#include <pthread.h>

namespace troupe::detail {

inline void block_sigpipe_on_this_thread() noexcept {
  thread_local bool blocked = false;
  if (blocked)
    return;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  blocked = true;
}

} // namespace troupe::detail
