#include "listener.hpp"

#include "troupe/actors/error.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace troupe::detail {

admitted_link::admitted_link(admitted_link&& other) noexcept
  : fd(other.fd), session(other.session), peer(std::move(other.peer)),
    max_message_bytes(other.max_message_bytes) {
  other.release();
}

admitted_link& admitted_link::operator=(admitted_link&& other) noexcept {
  if (this != &other) {
    this->~admitted_link();
    fd = other.fd;
    session = other.session;
    peer = std::move(other.peer);
    max_message_bytes = other.max_message_bytes;
    other.release();
  }
  return *this;
}

admitted_link::~admitted_link() {
  SSL_free(session);
  if (fd >= 0)
    ::close(fd);
  release();
}

void admitted_link::release() noexcept {
  fd = -1;
  session = nullptr;
}

namespace {

/// A listening, non-blocking socket on host:port, and the port it got.
std::pair<int, std::uint16_t> open_listening_socket(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const auto service = std::to_string(port);
  const int looked_up =
    getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
  if (looked_up != 0)
    throw network_error("cannot listen on " + host + ":" + service + ": " +
                        gai_strerror(looked_up));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses{found, freeaddrinfo};
  std::string why = "no address";
  for (auto* at = found; at != nullptr; at = at->ai_next) {
    const int fd = ::socket(at->ai_family, at->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
      continue;
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    if (::bind(fd, at->ai_addr, at->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
      const auto got = bound.ss_family == AF_INET6
                         ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                         : reinterpret_cast<sockaddr_in&>(bound).sin_port;
      return {fd, ntohs(got)};
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  throw network_error("cannot listen on " + host + ":" + service + ": " + why);
}

} // namespace

listener::listener(const std::string& host, std::uint16_t port, link_policy policy,
                   std::shared_ptr<const tls_context> tls)
  : host_(host), policy_(std::move(policy)), tls_(std::move(tls)) {
  std::tie(socket_, port_) = open_listening_socket(host, port);
  int ends[2];
  if (pipe2(ends, O_NONBLOCK | O_CLOEXEC) != 0) {
    ::close(socket_);
    throw network_error(std::string{"cannot make a pipe: "} + std::strerror(errno));
  }
  signal_read_ = ends[0];
  signal_write_ = ends[1];
}

listener::~listener() {
  close();
  if (signal_read_ >= 0)
    ::close(signal_read_);
  ::close(signal_write_);
  ::close(socket_);
}

int listener::take_signal() noexcept { return std::exchange(signal_read_, -1); }

void listener::admit(admitted_link link) {
  std::lock_guard guard{mutex_};
  if (closed_)
    return; // the link closes as it goes out of scope
  admitted_.push_back(std::move(link));
  const char byte = 1;
  (void)::write(signal_write_, &byte, 1);
}

std::optional<admitted_link> listener::take() {
  std::lock_guard guard{mutex_};
  if (admitted_.empty())
    return std::nullopt;
  auto link = std::move(admitted_.front());
  admitted_.pop_front();
  return link;
}

void listener::close() noexcept {
  std::lock_guard guard{mutex_};
  if (closed_.exchange(true))
    return;
  admitted_.clear();
  // Stops listening now, so the port is free again (its descriptor closes with the last owner),
  // and wakes the gate's poll, which then lets go of this listener.
  ::shutdown(socket_, SHUT_RDWR);
}

} // namespace troupe::detail
