#include "troupe/actors/network.hpp"

#include "troupe/actors/error.hpp"

#include "transport/transport.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <set>
#include <thread>

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace troupe::detail {

endpoint parse_endpoint(std::string_view address, std::string_view what) {
  const auto colon = address.rfind(':');
  const auto malformed = [&] {
    return invalid_argument(std::string{what} + " must be HOST:PORT, got '" + std::string{address} +
                            "'");
  };
  if (colon == std::string_view::npos || colon == 0)
    throw malformed();
  unsigned port = 0;
  const auto digits = address.substr(colon + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc{} || end != digits.data() + digits.size() || port > 65535)
    throw malformed();
  return {std::string{address.substr(0, colon)}, static_cast<std::uint16_t>(port)};
}

namespace {

/// Binds a socket on 127.0.0.1 at `port` (0: any) and releases it; the port it had, or 0.
std::uint16_t try_loopback_port(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  socklen_t length = sizeof address;
  const bool bound = fd >= 0 &&
                     ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                     ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  if (fd >= 0)
    ::close(fd);
  return bound ? ntohs(address.sin_port) : 0;
}

/// The first port the kernel hands out on its own (to port-0 binds and to connects' source
/// ends), from /proc; 32768 if unreadable.
std::uint16_t first_ephemeral_port() {
  std::ifstream range{"/proc/sys/net/ipv4/ip_local_port_range"};
  int low = 0;
  return range >> low && low > 1024 && low <= 65535 ? static_cast<std::uint16_t>(low) : 32768;
}

} // namespace

std::uint16_t free_loopback_port() {
  // Below the ephemeral range: a port the kernel hands out itself (to another test's listener
  // or outgoing connection) could be taken between this release and the listener's bind.
  constexpr std::uint16_t lowest = 10'000;
  const auto ceiling = first_ephemeral_port();
  if (ceiling > lowest) {
    thread_local std::minstd_rand random{std::random_device{}()};
    std::uniform_int_distribution<int> pick{lowest, ceiling - 1};
    for (int attempt = 0; attempt < 64; ++attempt)
      if (const auto port = try_loopback_port(static_cast<std::uint16_t>(pick(random))))
        return port;
  }
  if (const auto port = try_loopback_port(0))
    return port;
  throw network_error("no free TCP port on 127.0.0.1");
}

bool is_loopback(std::string_view host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

void check_listen_allowed(const std::string& host, bool tls, bool allow_insecure) {
  if (tls || is_loopback(host))
    return;
  if (!allow_insecure)
    throw invalid_argument("refusing to listen on " + host +
                           " without TLS: set tls options, or allow_insecure = true to accept "
                           "unencrypted, unauthenticated traffic on that network");
  std::cerr << "troupe: WARNING: listening on " << host
            << " without TLS (allow_insecure): traffic is neither encrypted nor authenticated\n";
}

void use_tls(runtime_state& rt, const tls_options& tls) {
  std::lock_guard guard{rt.tls_mutex};
  if (rt.tls) {
    if (rt.tls->options() != tls)
      throw state_error("this runtime already uses other TLS options (certificate '" +
                        rt.tls->options().certificate + "'); a process has one set");
    return;
  }
  rt.tls = std::make_shared<const tls_context>(tls);
  if (!tls.verify_host)
    std::cerr << "troupe: WARNING: tls_options::verify_host is off: any holder of a certificate "
                 "from the CA may stand in for the hosts this process connects to\n";
}

namespace {

std::shared_ptr<const tls_context> tls_of(runtime_state& rt, const link_policy& policy) {
  if (!policy.tls)
    return nullptr;
  std::lock_guard guard{rt.tls_mutex};
  if (!rt.tls)
    throw state_error("a TLS connection needs use_tls() first");
  return rt.tls;
}

} // namespace

std::string own_link_name(runtime_state& rt, const link_policy& policy, std::string fallback) {
  auto tls = tls_of(rt, policy);
  auto name = tls ? tls->common_name() : std::string{};
  return name.empty() ? fallback : name;
}

std::uint16_t publish(runtime_state& rt, const caf::actor& whom, const endpoint& at,
                      const link_policy& policy) {
  return rt.network->publish(whom, at.host, at.port, policy, tls_of(rt, policy));
}

void unpublish(runtime_state& rt, const caf::actor& whom, std::uint16_t port) {
  // Every listener belongs to the one BASP broker, which the default middleman actor reaches.
  (void)rt.system->middleman().unpublish(whom, port);
}

namespace {

/// The text CAF put in an error's context (why a connect failed), if any.
std::string caf_error_context(const caf::error& e) {
  const auto& context = e.context();
  return context.match_elements<std::string>() ? context.get_as<std::string>(0) : std::string{};
}

// Retries back off, doubling, with jitter: hundreds of members refused at once by a busy
// listener (its handshakes in progress at their bound) would otherwise come back together every
// few milliseconds, and their reconnections alone would keep the machine and the listener busy.
constexpr std::chrono::milliseconds first_retry_pause{20};
constexpr std::chrono::milliseconds last_retry_pause{1000};

/// `pause`, somewhere between half and all of it.
std::chrono::microseconds jittered(std::chrono::milliseconds pause) {
  thread_local std::minstd_rand random{std::random_device{}()};
  const auto full = std::chrono::duration_cast<std::chrono::microseconds>(pause).count();
  std::uniform_int_distribution<long> part{full / 2, full};
  return std::chrono::microseconds{part(random)};
}

/// One connection attempt; nullopt when worth retrying (nothing listens yet, a handshake that
/// did not finish, a listener that closed at once), with `last` saying why.
std::optional<caf::actor> try_connect(runtime_state& rt, const endpoint& at, caf::timespan timeout,
                                      std::string& last) {
  caf::scoped_actor self{*rt.system};
  std::optional<caf::actor> found;
  caf::error failure;
  self->request(rt.network->actor(), timeout, caf::connect_atom::value, at.host, at.port)
    .receive(
      [&](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>&) {
        if (ptr)
          found = caf::actor_cast<caf::actor>(std::move(ptr));
        else
          failure = caf::sec::no_actor_published_at_port;
      },
      [&](caf::error& e) { failure = std::move(e); });
  if (found)
    return found;
  last = caf_error_context(failure);
  if (failure == caf::sec::cannot_connect_to_node || failure == caf::sec::connection_timeout)
    return std::nullopt;
  if (failure == caf::sec::request_timeout)
    throw timeout_error("no answer from " + at.to_string() +
                        " (a listener that is not a troupe peer, or a frozen one?)");
  if (failure == caf::sec::disconnect_during_handshake)
    throw network_error(at.to_string() + " refused the connection: " + last);
  if (failure == caf::sec::no_actor_published_at_port)
    throw network_error("nothing is published at " + at.to_string());
  throw network_error("cannot connect to " + at.to_string() + ": " + rt.system->render(failure));
}

} // namespace

bool accepts_connections(const endpoint& at, std::chrono::milliseconds within) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const auto port = std::to_string(at.port);
  if (::getaddrinfo(at.host.c_str(), port.c_str(), &hints, &found) != 0)
    return false;
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses{found, ::freeaddrinfo};
  for (const auto* address = found; address != nullptr; address = address->ai_next) {
    const int fd = ::socket(address->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
      continue;
    bool made = ::connect(fd, address->ai_addr, address->ai_addrlen) == 0;
    if (!made && errno == EINPROGRESS) {
      pollfd waiting{fd, POLLOUT, 0};
      int error = 0;
      socklen_t size = sizeof error;
      made = ::poll(&waiting, 1, static_cast<int>(within.count())) == 1 &&
             ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 && error == 0;
    }
    ::close(fd);
    if (made)
      return true;
  }
  return false;
}

caf::actor connect(runtime_state& rt, const endpoint& at, const link_policy& policy,
                   std::chrono::steady_clock::time_point deadline) {
  using namespace std::chrono_literals;
  rt.network->intend(at.host, at.port, connect_intent{policy, tls_of(rt, policy), deadline});
  std::string last;
  auto pause = first_retry_pause;
  for (;;) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= 0s)
      throw timeout_error("nothing answered at " + at.to_string() + " in time" +
                          (last.empty() ? "" : " (last: " + last + ")"));
    if (auto found = try_connect(rt, at, std::chrono::ceil<caf::timespan>(left), last))
      return *found;
    std::this_thread::sleep_for(
      std::min<std::chrono::steady_clock::duration>(left, jittered(pause)));
    pause = std::min(pause * 2, last_retry_pause);
  }
}

void connect_async(runtime_state& rt, caf::event_based_actor* self, const endpoint& at,
                   const link_policy& policy, std::chrono::steady_clock::time_point deadline,
                   std::function<void(caf::actor)> on_connected,
                   std::function<void(const std::string&)> on_failed) {
  try { // `self` calls this from a handler: nothing may escape it
    rt.network->intend(at.host, at.port, connect_intent{policy, tls_of(rt, policy), deadline});
  } catch (const std::exception& e) {
    on_failed("cannot connect to " + at.to_string() + ": " + e.what());
    return;
  }
  const auto left = std::chrono::ceil<caf::timespan>(deadline - std::chrono::steady_clock::now());
  self
    ->request(rt.network->actor(), std::max(left, caf::timespan{std::chrono::milliseconds{1}}),
              caf::connect_atom::value, at.host, at.port)
    .then(
      [on_connected, on_failed, at](const caf::node_id&, caf::strong_actor_ptr& ptr,
                                    const std::set<std::string>&) {
        if (ptr)
          on_connected(caf::actor_cast<caf::actor>(std::move(ptr)));
        else
          on_failed("nothing is published at " + at.to_string());
      },
      [&rt, at, on_failed](caf::error& e) {
        const auto why = caf_error_context(e);
        on_failed("cannot connect to " + at.to_string() + ": " +
                  (why.empty() ? rt.system->render(e) : why));
      });
}

std::optional<peer_identity> peer_of(runtime_state& rt, const caf::node_id& node) {
  return rt.network->peers()->find(node);
}

} // namespace troupe::detail
