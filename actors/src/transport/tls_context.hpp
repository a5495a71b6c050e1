// One process's TLS set-up: an OpenSSL context made once from tls_options and shared by every
// connection, and the checks of what a peer's certificate names. Not installed.
#pragma once

#include "troupe/actors/tls_options.hpp"

#include <openssl/ssl.h>

#include <memory>
#include <string>

namespace troupe::detail {

/// OpenSSL's queued errors, as text (and the queue emptied); "no OpenSSL error" when empty.
std::string openssl_errors();

class tls_context {
public:
  /// Loads the files; throws invalid_argument naming the option and file that is wrong.
  explicit tls_context(tls_options options);

  const tls_options& options() const noexcept { return options_; }

  /// A session on connected socket `fd` (not owned), with the context's checks.
  SSL* new_session(int fd) const;

  /// The common name of this process's own certificate: what it claims to be when it has no
  /// name of its own (a pool's node).
  std::string common_name() const;

private:
  tls_options options_;
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context_;
};

/// Whether the peer certificate of `session` names `name`: a DNS or IP entry of its subject
/// alternative names, or its common name where it has no DNS entry.
bool certificate_names(SSL* session, const std::string& name);

/// Makes the TLS handshake of `session` fail unless the peer's certificate names `host`.
void require_host(SSL* session, const std::string& host);

} // namespace troupe::detail
