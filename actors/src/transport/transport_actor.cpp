// The middleman actor of troupe's transport: CAF's own publish/connect logic
// (caf::io::middleman_actor_impl, which also caches connections per endpoint), with listeners
// and connections that are troupe's. It runs on a thread of its own, since an outgoing
// handshake blocks it (within the handshake deadline at most).
#include "handover_doorman.hpp"
#include "handshake.hpp"
#include "signals.hpp"
#include "transport.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/io/middleman_actor_impl.hpp>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace troupe::detail {

namespace {

using clock = std::chrono::steady_clock;
namespace network = caf::io::network;

/// A TCP connection to host:port made before `deadline`, non-blocking; -1 with `why` set when
/// nothing answered (refused, unreachable, timed out).
int tcp_connect(const std::string& host, std::uint16_t port, clock::time_point deadline,
                std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int looked_up = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (looked_up != 0) {
    why = gai_strerror(looked_up);
    return -1;
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses{found, freeaddrinfo};
  for (auto* at = found; at != nullptr; at = at->ai_next) {
    const int fd = ::socket(at->ai_family, at->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
      continue;
    if (::connect(fd, at->ai_addr, at->ai_addrlen) != 0 && errno == EINPROGRESS) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
      pollfd entry{fd, POLLOUT, 0};
      int error = ETIMEDOUT;
      socklen_t size = sizeof error;
      if (left.count() > 0 && poll(&entry, 1, static_cast<int>(left.count())) == 1)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
      errno = error;
    } else {
      errno = 0;
    }
    if (errno == 0) {
      const int on = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      return fd;
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  return -1;
}

/// Retry-worthy failures carry `sec::cannot_connect_to_node` (nothing listening yet) or
/// `sec::connection_timeout`; a refusal, `sec::disconnect_during_handshake`. Each says why.
caf::error failure(caf::sec code, std::string why) { return caf::make_error(code, std::move(why)); }

class transport_actor : public caf::io::middleman_actor_impl {
public:
  transport_actor(caf::actor_config& config, caf::actor broker, transport* owner)
    : caf::io::middleman_actor_impl(config, std::move(broker)), owner_(owner),
      stopping_(owner->stopping()) {}

  const char* name() const override { return "troupe.transport"; }

protected:
  caf::expected<caf::io::scribe_ptr> connect(const std::string& host, std::uint16_t port) override {
    block_sigpipe_on_this_thread();
    if (*stopping_) // owner_ may be gone
      return failure(caf::sec::cannot_connect_to_node, "the runtime is stopping");
    const auto intent = owner_->intent_for(host, port);
    if (!intent)
      return failure(caf::sec::cannot_connect_to_node,
                     "troupe connects only where it was asked to: " + host);
    const auto deadline = std::min(intent->deadline, clock::now() + owner_->limits().timeout);
    std::string why;
    const int fd = tcp_connect(host, port, deadline, why);
    if (fd < 0)
      return failure(caf::sec::cannot_connect_to_node, why);
    SSL* session = nullptr;
    try {
      if (intent->policy.tls)
        session = intent->tls->new_session(fd);
      auto peer = shake_hands(fd, session, link_side::joiner, intent->policy, intent->tls.get(),
                              host, deadline);
      if (*stopping_) { // the broker may be stopping, and owner_ gone: nothing is handed on
        SSL_free(session);
        ::close(fd);
        return failure(caf::sec::cannot_connect_to_node,
                       "the runtime stopped during the handshake");
      }
      admitted_link link{fd, session, std::move(peer), intent->policy.max_message_bytes};
      return caf::make_counted<guarded_scribe>(mpx(), std::move(link), owner_->peers());
    } catch (const handshake_failure& e) {
      SSL_free(session);
      ::close(fd);
      const bool retry =
        e.why == handshake_failure::reason::timed_out || e.why == handshake_failure::reason::closed;
      return failure(retry ? caf::sec::connection_timeout : caf::sec::disconnect_during_handshake,
                     e.what());
    } catch (const std::exception& e) {
      SSL_free(session);
      ::close(fd);
      return failure(caf::sec::disconnect_during_handshake, e.what());
    }
  }

  caf::expected<caf::io::doorman_ptr> open(std::uint16_t port, const char*, bool) override {
    if (*stopping_) // owner_ may be gone
      return failure(caf::sec::cannot_open_port, "the runtime is stopping");
    auto prepared = owner_->take_prepared(port);
    if (!prepared)
      return failure(caf::sec::cannot_open_port,
                     "troupe listens only through its transport's publish");
    return caf::make_counted<handover_doorman>(mpx(), std::move(prepared), owner_->peers());
  }

private:
  network::default_multiplexer& mpx() {
    return static_cast<network::default_multiplexer&>(system().middleman().backend());
  }

  transport* owner_; // read only while *stopping_ is false: the transport waits for this actor
  std::shared_ptr<const std::atomic<bool>> stopping_;
};

} // namespace

caf::io::middleman_actor spawn_transport_actor(caf::actor_system& system, transport& owner) {
  auto broker = system.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  return system.spawn<transport_actor, caf::detached + caf::hidden>(std::move(broker), &owner);
}

} // namespace troupe::detail
