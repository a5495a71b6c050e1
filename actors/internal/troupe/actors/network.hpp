// The network layer: actors published on and reached over CAF's middleman (BASP), through
// troupe's transport (src/transport/): every connection makes troupe's handshake (TLS, proof of
// the secret, names) before CAF reads a byte of it, and never a connect without a deadline.
// Peers are found dead by monitors, and frozen by the heartbeats every troupe runtime sends
// (runtime.cpp). Not installed: it includes CAF.
#pragma once

#include "troupe/actors/link_policy.hpp"
#include "troupe/actors/runtime_state.hpp"
#include "troupe/actors/tls_options.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/node_id.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
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

/// A TCP port free on 127.0.0.1 now (bound, read and released), below the kernel's ephemeral
/// range where one is free there: for tests and benchmarks that start a listener and its peers
/// at once.
std::uint16_t free_loopback_port();

/// Whether something accepts TCP connections at `at` now: a connection made within `within`
/// and closed at once, nothing sent. A peer that does so and still does not answer is slow,
/// not gone.
bool accepts_connections(const endpoint& at, std::chrono::milliseconds within);

/// 127.0.0.0/8, ::1 and "localhost".
bool is_loopback(std::string_view host);

/// Plain TCP may listen on loopback only: elsewhere it needs TLS, or `allow_insecure`, which is
/// logged. Throws invalid_argument naming the address otherwise.
void check_listen_allowed(const std::string& host, bool tls, bool allow_insecure);

/// Makes this runtime's TLS connections use `tls`, after loading its files. Throws
/// invalid_argument naming the file, or state_error if the runtime already uses other options.
void use_tls(runtime_state& rt, const tls_options& tls);

/// The name this process claims on links where it has none of its own (a pool's node): its
/// certificate's common name with TLS, else `fallback`.
std::string own_link_name(runtime_state& rt, const link_policy& policy, std::string fallback);

/// Publishes `whom` on host:port (port 0: any) under `policy`; returns the port. Throws
/// network_error.
std::uint16_t publish(runtime_state& rt, const caf::actor& whom, const endpoint& at,
                      const link_policy& policy);

/// Stops publishing `whom` on `port` (no-op if it is not).
void unpublish(runtime_state& rt, const caf::actor& whom, std::uint16_t port);

/// Reaches the actor published at `at` under `policy`, retrying while nothing listens there yet,
/// until `deadline`. Throws timeout_error (no answer in time: a silent listener, or nothing came
/// up; it names the last failure) or network_error (refused: the handshake failed, saying why,
/// or nothing is published there).
caf::actor connect(runtime_state& rt, const endpoint& at, const link_policy& policy,
                   std::chrono::steady_clock::time_point deadline);

/// As connect(), without blocking and in one attempt (the caller tries again as it sees fit),
/// for an actor that connects while it runs (a world's member reaching another on first use):
/// `self` gets `on_connected` with the actor published at `at`, or `on_failed` saying why not,
/// by `deadline`.
void connect_async(runtime_state& rt, caf::event_based_actor* self, const endpoint& at,
                   const link_policy& policy, std::chrono::steady_clock::time_point deadline,
                   std::function<void(caf::actor)> on_connected,
                   std::function<void(const std::string&)> on_failed);

/// Who the peer that CAF knows as `node` proved to be when it connected; nullopt for a node
/// this process has no connection to (or this process itself).
std::optional<peer_identity> peer_of(runtime_state& rt, const caf::node_id& node);

} // namespace troupe::detail
