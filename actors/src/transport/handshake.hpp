// The handshake every troupe connection makes before CAF sees it: TLS when asked for, then
// each end sends a hello (a magic word, a fresh nonce, the name it claims) and an HMAC that
// proves it holds the secret, bound to both nonces and both names; the listener ends with a
// verdict byte, so a refused joiner learns why. Every read and write waits until one deadline at
// most, and no read is larger than a name of 255 bytes. Not installed.
#pragma once

#include "tls_context.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/actors/link_policy.hpp"

#include <chrono>

namespace troupe::detail {

enum class link_side { listener, joiner };

/// Why a handshake failed, for the side that saw it.
class handshake_failure : public network_error {
public:
  enum class reason { timed_out, closed, not_troupe, wrong_secret, name_refused, tls };
  handshake_failure(reason why, const std::string& message) : network_error(message), why(why) {}
  reason why;
};

/// Runs the handshake on connected, non-blocking socket `fd` through `session` (TLS; null for
/// plain TCP), as `side`. Returns who the other end proved to be; throws handshake_failure.
/// `host` is what the joiner connected to (checked against the listener's certificate).
/// Listener with TLS only: whether the peer opened with troupe's plain hello (it has no TLS);
/// if so it has been told that TLS is required. Waits until the deadline for the peer's first
/// bytes.
bool refused_plain_joiner(int fd, std::chrono::steady_clock::time_point deadline);

peer_identity shake_hands(int fd, SSL* session, link_side side, const link_policy& policy,
                          const tls_context* tls, const std::string& host,
                          std::chrono::steady_clock::time_point deadline);

} // namespace troupe::detail
