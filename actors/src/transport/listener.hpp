// A listening socket of this process and the connections admitted on it: those whose handshake
// succeeded, waiting for CAF's BASP broker to take them. One byte on a pipe signals each, so
// that CAF's multiplexer can watch the pipe as it would a listening socket (handover_doorman).
// Not installed.
#pragma once

#include "tls_context.hpp"

#include "troupe/actors/link_policy.hpp"

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace troupe::detail {

/// A connection that has finished its handshake. Owns its socket and TLS session.
struct admitted_link {
  admitted_link() = default;
  admitted_link(int fd, SSL* session, peer_identity peer, std::size_t max_message_bytes)
    : fd(fd), session(session), peer(std::move(peer)), max_message_bytes(max_message_bytes) {}
  admitted_link(admitted_link&& other) noexcept;
  admitted_link& operator=(admitted_link&& other) noexcept;
  ~admitted_link();

  /// Gives up the socket and session to whoever takes them over (a scribe).
  void release() noexcept;

  int fd = -1;
  SSL* session = nullptr;
  peer_identity peer;
  std::size_t max_message_bytes = default_max_message_bytes;
};

class listener {
public:
  /// Binds and listens on host:port (port 0: any); throws network_error naming the address.
  listener(const std::string& host, std::uint16_t port, link_policy policy,
           std::shared_ptr<const tls_context> tls);
  ~listener();
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;

  int socket() const noexcept { return socket_; }
  std::uint16_t port() const noexcept { return port_; }
  const std::string& host() const noexcept { return host_; }
  const link_policy& policy() const noexcept { return policy_; }
  const tls_context* tls() const noexcept { return tls_.get(); }

  /// The pipe end that becomes readable with each admitted link; whoever takes it closes it.
  int take_signal() noexcept;
  /// Queues a link whose handshake succeeded (closed at once if the listener is closed).
  void admit(admitted_link link);
  /// The oldest admitted link, if any.
  std::optional<admitted_link> take();

  /// Stops listening: the gate drops the socket, and links not taken are closed.
  void close() noexcept;
  bool closed() const noexcept { return closed_; }

private:
  std::string host_;
  std::uint16_t port_ = 0;
  link_policy policy_;
  std::shared_ptr<const tls_context> tls_;
  int socket_ = -1;
  int signal_read_ = -1;
  int signal_write_ = -1;
  std::atomic<bool> closed_{false};
  std::mutex mutex_;
  std::deque<admitted_link> admitted_;
};

} // namespace troupe::detail
