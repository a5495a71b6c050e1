#include "tls_context.hpp"

#include "troupe/actors/error.hpp"

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <arpa/inet.h>

namespace troupe::detail {

namespace {

/// TLS 1.2 suites with ephemeral ECDH and an AEAD cipher; TLS 1.3's suites all have both.
constexpr const char* forward_secret_ciphers = "ECDHE+AESGCM:ECDHE+CHACHA20";

int passphrase_callback(char* buffer, int size, int, void* passphrase) {
  const auto& text = *static_cast<const std::string*>(passphrase);
  const auto n = std::min<std::size_t>(text.size(), static_cast<std::size_t>(size));
  std::copy_n(text.data(), n, buffer);
  return static_cast<int>(n);
}

void require_field(const std::string& value, const char* field) {
  if (value.empty())
    throw invalid_argument(std::string{"tls_options::"} + field +
                           " is empty: TLS needs a certificate, its key and the CA file");
}

bool is_ip_address(const std::string& host) {
  unsigned char buffer[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buffer) == 1 ||
         inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

} // namespace

std::string openssl_errors() {
  std::string text;
  while (auto code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof buffer);
    text += text.empty() ? "" : "; ";
    text += buffer;
  }
  return text.empty() ? "no OpenSSL error" : text;
}

tls_context::tls_context(tls_options options)
  : options_(std::move(options)), context_(SSL_CTX_new(TLS_method()), SSL_CTX_free) {
  require_field(options_.certificate, "certificate");
  require_field(options_.key, "key");
  require_field(options_.ca_file, "ca_file");
  ERR_clear_error();
  auto* ctx = context_.get();
  if (ctx == nullptr)
    throw network_error("cannot create an OpenSSL context: " + openssl_errors());
  const auto fail = [](const char* field, const std::string& what) {
    return invalid_argument(std::string{"tls_options::"} + field + ": " + what + " (" +
                            openssl_errors() + ")");
  };
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (SSL_CTX_set_cipher_list(ctx, forward_secret_ciphers) != 1)
    throw network_error("OpenSSL has no forward-secret cipher: " + openssl_errors());
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  // The callback reads the passphrase only while the key loads, below.
  SSL_CTX_set_default_passwd_cb(ctx, passphrase_callback);
  SSL_CTX_set_default_passwd_cb_userdata(ctx, &options_.passphrase);
  if (SSL_CTX_use_certificate_chain_file(ctx, options_.certificate.c_str()) != 1)
    throw fail("certificate", "cannot load '" + options_.certificate + "'");
  if (SSL_CTX_use_PrivateKey_file(ctx, options_.key.c_str(), SSL_FILETYPE_PEM) != 1)
    throw fail("key", "cannot load '" + options_.key + "'");
  if (SSL_CTX_check_private_key(ctx) != 1)
    throw fail("key",
               "'" + options_.key + "' does not match certificate '" + options_.certificate + "'");
  if (SSL_CTX_load_verify_locations(ctx, options_.ca_file.c_str(), nullptr) != 1)
    throw fail("ca_file", "cannot load '" + options_.ca_file + "'");
  SSL_CTX_set_default_passwd_cb_userdata(ctx, nullptr);
}

SSL* tls_context::new_session(int fd) const {
  ERR_clear_error();
  SSL* session = SSL_new(context_.get());
  if (session == nullptr || SSL_set_fd(session, fd) != 1) {
    SSL_free(session);
    throw network_error("cannot make a TLS session: " + openssl_errors());
  }
  return session;
}

bool certificate_names(SSL* session, const std::string& name) {
  X509* certificate = SSL_get0_peer_certificate(session);
  if (certificate == nullptr || name.empty())
    return false;
  if (is_ip_address(name))
    return X509_check_ip_asc(certificate, name.c_str(), 0) == 1;
  return X509_check_host(certificate, name.data(), name.size(), X509_CHECK_FLAG_NO_WILDCARDS,
                         nullptr) == 1;
}

void require_host(SSL* session, const std::string& host) {
  X509_VERIFY_PARAM* param = SSL_get0_param(session);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  const bool set = is_ip_address(host) ? X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) == 1
                                       : X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0) == 1;
  if (!set)
    throw invalid_argument("cannot check a certificate against host '" + host + "'");
}

std::string tls_context::common_name() const {
  X509* certificate = SSL_CTX_get0_certificate(context_.get());
  if (certificate == nullptr)
    return {};
  char buffer[256] = {};
  const int n = X509_NAME_get_text_by_NID(X509_get_subject_name(certificate), NID_commonName,
                                          buffer, sizeof buffer);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string{};
}

} // namespace troupe::detail
