// What both ends of a connection between troupe processes prove to each other before CAF reads
// a byte of it, and what the connection may carry afterwards. Set by the module that listens or
// connects (a world, a pool); enforced by the transport (actors/src/transport/). No CAF here.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace troupe::detail {

/// The largest message a connection carries unless its owner says otherwise: 1 GiB.
inline constexpr std::size_t default_max_message_bytes = std::size_t{1} << 30;

struct link_policy {
  /// Proven by both ends (an HMAC of the other end's fresh nonce), never sent. Empty: nothing
  /// is proven, and only TLS certificates or loopback keep strangers out.
  std::string secret;
  /// This process's name, claimed to the other end; with TLS its certificate must name it.
  std::string name;
  bool tls = false;
  /// Connecting only: the name the listener must claim and, with TLS, carry in its
  /// certificate (a world's member of a known rank). Empty: any name, and with TLS the
  /// certificate must name the host connected to instead (unless tls_options::verify_host is
  /// off).
  std::string peer_name;
  /// The largest CAF message the connection carries, in bytes; one announcing more closes it.
  std::size_t max_message_bytes = default_max_message_bytes;
};

/// Who is at the other end of a connection, as its handshake proved it.
struct peer_identity {
  std::string name; // what it claimed; certified when `certified`
  std::string address; // its IP address, as the socket says
  std::string local_address; // this end's IP address on the connection
  bool proved_secret = false;
  bool certified = false;
};

/// What a process allows connections that have not finished their handshake.
struct handshake_limits {
  /// A connection that has not proven itself by then is closed.
  std::chrono::milliseconds timeout{5000};
  /// Handshakes in progress at once; a connection beyond them is closed at once.
  std::size_t max_pending = 64;
  /// Failed proofs one source address may make at once, and how many more it earns a second;
  /// its connections are closed at once while it has none left.
  double failure_burst = 8;
  double failures_per_second = 1;
};

} // namespace troupe::detail
