// The network layer: actors published on and reached over CAF's middleman (BASP), with TLS
// through CAF's OpenSSL module, never a blocking connect without a timeout. Peers are found dead
// by monitors, and frozen by the heartbeats every troupe runtime sends (runtime_state.cpp).
// Not installed: it includes CAF.
#pragma once

#include "troupe/actors/runtime_state.hpp"
#include "troupe/actors/tls_options.hpp"

#include <caf/actor.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace troupe::detail {

/// "host:port", parsed; `what` names the option in the error when it is malformed.
struct endpoint {
  std::string host;
  std::uint16_t port = 0;

  std::string to_string() const { return host + ":" + std::to_string(port); }
};
endpoint parse_endpoint(std::string_view address, std::string_view what);

/// A TCP port free on 127.0.0.1 now (bound, read and released): for tests and benchmarks that
/// start a listener and its peers at once.
std::uint16_t free_loopback_port();

/// 127.0.0.0/8, ::1 and "localhost".
bool is_loopback(std::string_view host);

/// Plain TCP may listen on loopback only: elsewhere it needs TLS, or `allow_insecure`, which is
/// logged. Throws invalid_argument naming the address otherwise.
void check_listen_allowed(const std::string& host, bool tls, bool allow_insecure);

/// Makes this runtime's TLS connections use `tls`, after checking that its files load (a file
/// CAF cannot load would throw on its network thread and end the process). Throws
/// invalid_argument naming the file, or state_error if the runtime already uses other options.
void use_tls(runtime_state& rt, const tls_options& tls);

/// Publishes `whom` on host:port (port 0: any); returns the port. Throws network_error.
std::uint16_t publish(runtime_state& rt, const caf::actor& whom, const endpoint& at, bool tls);

/// Stops publishing `whom` on `port` (no-op if it is not).
void unpublish(runtime_state& rt, const caf::actor& whom, std::uint16_t port);

/// Reaches the actor published at `at`, retrying while nothing listens there yet, until
/// `deadline`. Throws timeout_error (no answer in time: a silent listener, or nothing came up)
/// or network_error (refused: a TLS handshake that failed, nothing published there).
caf::actor connect(runtime_state& rt, const endpoint& at, bool tls,
                   std::chrono::steady_clock::time_point deadline);

} // namespace troupe::detail
