#include "gate.hpp"

#include "handshake.hpp"
#include "signals.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <iostream>
#include <system_error>

namespace troupe::detail {

namespace {

using clock = std::chrono::steady_clock;

std::string address_text(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw =
    address.ss_family == AF_INET6
      ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6&>(address).sin6_addr)
      : static_cast<const void*>(&reinterpret_cast<const sockaddr_in&>(address).sin_addr);
  return inet_ntop(address.ss_family, raw, text, sizeof text) != nullptr ? text : "?";
}

} // namespace

gate::gate(handshake_limits limits)
  : limits_(limits), throttle_(limits.failure_burst, limits.failures_per_second),
    wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (wake_fd_ < 0)
    throw network_error("cannot make an eventfd for the connection gate");
  acceptor_ = std::thread([this] { accept_loop(); });
}

gate::~gate() {
  {
    std::lock_guard guard{mutex_};
    stopping_ = true;
    // A handshake blocked in poll returns at once on a socket shut down.
    for (auto& job : jobs_)
      if (job.fd >= 0)
        ::shutdown(job.fd, SHUT_RDWR);
  }
  wake();
  acceptor_.join();
  for (auto& job : jobs_)
    job.thread.join();
  ::close(wake_fd_);
  ::close(reserve_fd_);
}

void gate::add(std::shared_ptr<listener> l) {
  {
    std::lock_guard guard{mutex_};
    listeners_.push_back(std::move(l));
  }
  wake();
}

std::size_t gate::pending() const {
  std::lock_guard guard{mutex_};
  std::size_t n = 0;
  for (const auto& job : jobs_)
    n += job.done ? 0 : 1;
  return n;
}

void gate::wake() noexcept {
  const std::uint64_t one = 1;
  (void)::write(wake_fd_, &one, sizeof one);
}

void gate::accept_loop() {
  std::vector<pollfd> watched;
  std::vector<std::shared_ptr<listener>> polled;
  for (;;) {
    {
      std::lock_guard guard{mutex_};
      if (stopping_)
        return;
      std::erase_if(listeners_, [](const auto& l) { return l->closed(); });
      polled = listeners_;
    }
    reap();
    watched.assign(1, pollfd{wake_fd_, POLLIN, 0});
    for (const auto& l : polled)
      watched.push_back(pollfd{l->socket(), POLLIN, 0});
    // Wakes now and then to join finished handshakes.
    if (poll(watched.data(), watched.size(), 1000) < 0)
      continue;
    if (watched[0].revents != 0) {
      std::uint64_t count = 0;
      (void)::read(wake_fd_, &count, sizeof count);
    }
    for (std::size_t i = 0; i < polled.size(); ++i)
      if (watched[i + 1].revents != 0)
        accept_from(polled[i]);
  }
}

void gate::accept_from(const std::shared_ptr<listener>& l) {
  for (;;) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    const int fd = accept4(l->socket(), reinterpret_cast<sockaddr*>(&address), &length,
                           SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE)
        refuse_without_a_descriptor(l->socket());
      return; // nothing more now
    }
    auto from = address_text(address);
    if (!throttle_.allows(from)) {
      ::close(fd);
      refused(from + ": too many failed proofs of the secret from there");
      continue;
    }
    if (pending() >= limits_.max_pending) {
      ::close(fd);
      refused(from + ": " + std::to_string(limits_.max_pending) +
              " handshakes in progress already");
      continue;
    }
    start_handshake(l, fd, std::move(from));
  }
}

void gate::refuse_without_a_descriptor(int listening) {
  // The connection stays in the backlog, so the socket stays readable and poll would return at
  // once for ever: 100 % CPU while descriptors are out. The descriptor kept in reserve makes
  // room to take the connection and close it.
  ::close(reserve_fd_);
  const int fd = ::accept(listening, nullptr, nullptr);
  if (fd >= 0)
    ::close(fd);
  reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  refused("a connection: this process has no descriptor left for it");
}

void gate::start_handshake(const std::shared_ptr<listener>& l, int fd, std::string address) {
  {
    std::lock_guard guard{mutex_};
    if (stopping_) {
      ::close(fd);
      return;
    }
    auto& job = jobs_.emplace_back(handshake_job{fd, {}, false});
    try {
      job.thread = std::thread([this, l, address, &job] {
        run_handshake(l, job, address);
        std::lock_guard done{mutex_};
        job.done = true;
      });
      return;
    } catch (const std::system_error&) { // no thread to be had now: the connection goes
      jobs_.pop_back();
      ::close(fd);
    }
  }
  refused(address + ": no thread for its handshake");
}

void gate::run_handshake(const std::shared_ptr<listener>& l, handshake_job& job,
                         const std::string& address) {
  block_sigpipe_on_this_thread();
  const int fd = job.fd;
  // From here on the socket may be closed or handed over: the destructor must not touch it.
  const auto let_go = [&] {
    std::lock_guard guard{mutex_};
    job.fd = -1;
  };
  SSL* session = nullptr;
  try {
    const int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    const auto deadline = clock::now() + limits_.timeout;
    if (l->tls() != nullptr && refused_plain_joiner(fd, deadline))
      throw handshake_failure(handshake_failure::reason::tls, "a joiner without TLS");
    if (l->tls() != nullptr)
      session = l->tls()->new_session(fd);
    auto peer = shake_hands(fd, session, link_side::listener, l->policy(), l->tls(), "", deadline);
    let_go();
    l->admit(admitted_link{fd, session, std::move(peer), l->policy().max_message_bytes});
    return;
  } catch (const handshake_failure& e) {
    if (e.why == handshake_failure::reason::wrong_secret)
      throttle_.failed(address);
    refused(address + ": " + e.what());
  } catch (const std::exception& e) {
    refused(address + ": " + e.what());
  }
  let_go();
  SSL_free(session);
  ::close(fd);
}

void gate::reap() {
  std::list<handshake_job> finished;
  {
    std::lock_guard guard{mutex_};
    for (auto at = jobs_.begin(); at != jobs_.end();) {
      auto next = std::next(at);
      if (at->done)
        finished.splice(finished.end(), jobs_, at);
      at = next;
    }
  }
  for (auto& job : finished)
    job.thread.join();
}

void gate::refused(const std::string& why) {
  std::lock_guard guard{mutex_};
  ++refusals_;
  const auto now = clock::now();
  if (now - last_report_ < std::chrono::seconds{1})
    return;
  std::cerr << "troupe: refused " << refusals_ << " connection" << (refusals_ == 1 ? "" : "s")
            << " (last: " << why << ")" << std::endl;
  refusals_ = 0;
  last_report_ = now;
}

} // namespace troupe::detail
