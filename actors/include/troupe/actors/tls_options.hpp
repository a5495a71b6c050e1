// TLS between the processes of a world (or a pool and its nodes).
//
//   troupe::tls_options tls{.certificate = "certs/node1.pem", .key = "certs/node1.key",
//                           .ca_file = "certs/ca.pem"};
//
// With TLS, both ends of every connection present a certificate and verify the other's against
// `ca_file`: a peer with a certificate from another CA, or with none, is refused. A certificate
// must also name who holds it: a member's must name the member (its world name), and a process
// that connects to an address checks that the certificate there names that host or address, as
// an HTTPS client does. Only TLS 1.2 or later with ephemeral key exchange (forward secrecy) is
// spoken. Every process of a program uses one set of options (the first it is given);
// `scripts/make-certs.sh DIR NAME[=HOST,...]...` makes a CA and a certificate per name with the
// `openssl` command.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace troupe {

/// TLS for a world or a pool's nodes: this process's certificate and key, the CA every peer's
/// certificate must come from, and what a peer's certificate must name.
struct tls_options {
  /// This process's certificate (PEM; a chain may follow it in the file).
  std::string certificate;
  /// Its private key (PEM).
  std::string key;
  /// The CA certificate (PEM) that every peer's certificate must be signed by.
  std::string ca_file;
  /// The key's passphrase, if the key is encrypted.
  std::string passphrase;
  /// Names a peer's certificate may carry instead of the name the peer claims (a certificate
  /// shared by every process of a cluster, say). Empty: it must name the peer itself.
  std::vector<std::string> peer_names;
  /// Check that the certificate at an address this process connects to names that host or
  /// address. Turning it off is logged: any holder of a certificate from the CA could then
  /// stand in for the listener.
  bool verify_host = true;

  /// The same files and settings.
  friend bool operator==(const tls_options&, const tls_options&) = default;

  /// From TROUPE_TLS_CERT, TROUPE_TLS_KEY, TROUPE_TLS_CA and TROUPE_TLS_PASSPHRASE (how a
  /// launcher or a pool's node passes them): nullopt if none of the first three is set;
  /// invalid_argument naming those missing if only some are.
  static std::optional<tls_options> from_environment();
};

} // namespace troupe
