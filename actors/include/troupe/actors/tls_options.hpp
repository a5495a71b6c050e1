// TLS between the processes of a world (or a pool and its nodes), through CAF's OpenSSL module.
//
//   troupe::tls_options tls{.certificate = "certs/node1.pem", .key = "certs/node1.key",
//                           .ca_file = "certs/ca.pem"};
//
// With TLS, both ends of every connection present a certificate and verify the other's against
// `ca_file`: a peer with a certificate from another CA, or with none, is refused. Every process
// of a program uses one set of options (the first it is given); `scripts/make-certs.sh DIR
// NAME...` makes a CA and a certificate per name with the `openssl` command.
#pragma once

#include <string>

namespace troupe {

struct tls_options {
  /// This process's certificate (PEM; a chain may follow it in the file).
  std::string certificate;
  /// Its private key (PEM).
  std::string key;
  /// The CA certificate (PEM) that every peer's certificate must be signed by.
  std::string ca_file;
  /// The key's passphrase, if the key is encrypted.
  std::string passphrase;

  friend bool operator==(const tls_options&, const tls_options&) = default;
};

} // namespace troupe
