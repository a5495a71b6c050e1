// Where connections from other processes come in: one thread accepts on every listener of this
// process, and each accepted connection makes its handshake on a thread of its own, within the
// handshake deadline, before CAF sees a byte of it. A stranger costs a bounded number of
// descriptors and threads (handshake_limits::max_pending) and no CPU while it stays silent; a
// source that keeps failing to prove the secret is throttled (source_throttle). Not installed.
#pragma once

#include "listener.hpp"
#include "source_throttle.hpp"

#include <fcntl.h>

#include <condition_variable>
#include <list>
#include <thread>
#include <vector>

namespace troupe::detail {

class gate {
public:
  explicit gate(handshake_limits limits);
  ~gate();
  gate(const gate&) = delete;
  gate& operator=(const gate&) = delete;

  /// Starts accepting on `l`.
  void add(std::shared_ptr<listener> l);

  /// Handshakes in progress now.
  std::size_t pending() const;

private:
  struct handshake_job {
    int fd; // -1 once closed or handed over
    std::thread thread;
    bool done = false;
  };

  void accept_loop();
  void accept_from(const std::shared_ptr<listener>& l);
  /// Out of descriptors: closes the next pending connection with the reserve descriptor.
  void refuse_without_a_descriptor(int listening);
  void start_handshake(const std::shared_ptr<listener>& l, int fd, std::string address);
  void run_handshake(const std::shared_ptr<listener>& l, handshake_job& job,
                     const std::string& address);
  void reap();
  void wake() noexcept;
  void refused(const std::string& why);

  const handshake_limits limits_;
  source_throttle throttle_;
  int wake_fd_ = -1;
  int reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  mutable std::mutex mutex_;
  bool stopping_ = false;
  std::vector<std::shared_ptr<listener>> listeners_;
  std::list<handshake_job> jobs_;
  std::size_t refusals_ = 0;
  std::chrono::steady_clock::time_point last_report_{};
  std::thread acceptor_;
};

} // namespace troupe::detail
