#include "troupe/actors/network.hpp"

#include "troupe/actors/error.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <charconv>
#include <iostream>
#include <memory>
#include <set>
#include <thread>

#include <sys/socket.h>
#include <unistd.h>

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

std::uint16_t free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  const bool found =
    fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  if (fd >= 0)
    ::close(fd);
  if (!found)
    throw network_error("no free TCP port on 127.0.0.1");
  return ntohs(address.sin_port);
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

namespace {

std::string openssl_errors() {
  std::string text;
  while (auto code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof buffer);
    text += text.empty() ? "" : "; ";
    text += buffer;
  }
  return text.empty() ? "unknown OpenSSL error" : text;
}

int passphrase_callback(char* buffer, int size, int, void* passphrase) {
  const auto& text = *static_cast<const std::string*>(passphrase);
  const auto n = std::min<std::size_t>(text.size(), static_cast<std::size_t>(size));
  std::copy_n(text.data(), n, buffer);
  return static_cast<int>(n);
}

/// Loads the files as CAF will, so that a bad one is an error here rather than an exception on
/// CAF's network thread.
void check_tls_files(const tls_options& tls) {
  const auto require = [](const std::string& value, const char* field) {
    if (value.empty())
      throw invalid_argument(std::string{"tls_options::"} + field +
                             " is empty: TLS needs a certificate, its key and the CA file");
  };
  require(tls.certificate, "certificate");
  require(tls.key, "key");
  require(tls.ca_file, "ca_file");
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context{SSL_CTX_new(TLS_method()),
                                                             SSL_CTX_free};
  if (!context)
    throw network_error("cannot create an OpenSSL context: " + openssl_errors());
  auto* ctx = context.get();
  std::string passphrase = tls.passphrase;
  SSL_CTX_set_default_passwd_cb(ctx, passphrase_callback);
  SSL_CTX_set_default_passwd_cb_userdata(ctx, &passphrase);
  const auto fail = [](const char* field, const std::string& path) {
    return invalid_argument(std::string{"tls_options::"} + field + ": cannot load '" + path +
                            "' (" + openssl_errors() + ")");
  };
  if (SSL_CTX_use_certificate_chain_file(ctx, tls.certificate.c_str()) != 1)
    throw fail("certificate", tls.certificate);
  if (SSL_CTX_use_PrivateKey_file(ctx, tls.key.c_str(), SSL_FILETYPE_PEM) != 1)
    throw fail("key", tls.key);
  if (SSL_CTX_check_private_key(ctx) != 1)
    throw fail("key", tls.key + "' does not match certificate '" + tls.certificate);
  if (SSL_CTX_load_verify_locations(ctx, tls.ca_file.c_str(), nullptr) != 1)
    throw fail("ca_file", tls.ca_file);
}

} // namespace

void use_tls(runtime_state& rt, const tls_options& tls) {
  std::lock_guard guard{rt.tls_mutex};
  if (rt.tls) {
    if (*rt.tls != tls)
      throw state_error("this runtime already uses other TLS options (certificate '" +
                        rt.tls->certificate + "'); a process has one set");
    return;
  }
  check_tls_files(tls);
  // CAF's OpenSSL module reads these each time it sets up a connection (caf::openssl::session),
  // so they take effect for every TLS connection made from now on.
  rt.config.openssl_certificate = tls.certificate;
  rt.config.openssl_key = tls.key;
  rt.config.openssl_cafile = tls.ca_file;
  rt.config.openssl_passphrase = tls.passphrase;
  rt.tls = tls;
}

namespace {

bool tls_configured(runtime_state& rt) {
  std::lock_guard guard{rt.tls_mutex};
  return rt.tls.has_value();
}

caf::io::middleman_actor connector(runtime_state& rt, bool tls) {
  if (tls && !tls_configured(rt))
    throw state_error("a TLS connection needs use_tls() first");
  return tls ? rt.system->openssl_manager().actor_handle() : rt.system->middleman().actor_handle();
}

} // namespace

std::uint16_t publish(runtime_state& rt, const caf::actor& whom, const endpoint& at, bool tls) {
  auto port = tls ? caf::openssl::publish(whom, at.port, at.host.c_str(), true)
                  : rt.system->middleman().publish(whom, at.port, at.host.c_str(), true);
  if (!port)
    throw network_error("cannot listen on " + at.to_string() + ": " +
                        rt.system->render(port.error()));
  return *port;
}

void unpublish(runtime_state& rt, const caf::actor& whom, std::uint16_t port) {
  // TLS listeners belong to the same BASP broker as plain ones, and CAF 0.17's own
  // openssl::unpublish sends a message its middleman does not understand.
  (void)rt.system->middleman().unpublish(whom, port);
}

namespace {

/// One connection attempt; nullopt when worth retrying: nothing listens yet, or the handshake
/// did not finish within CAF's connection timeout (a listener busy with other handshakes).
std::optional<caf::actor> try_connect(runtime_state& rt, const endpoint& at, bool tls,
                                      caf::timespan timeout) {
  caf::scoped_actor self{*rt.system};
  std::optional<caf::actor> found;
  caf::error failure;
  self->request(connector(rt, tls), timeout, caf::connect_atom::value, at.host, at.port)
    .receive(
      [&](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>&) {
        if (ptr)
          found = caf::actor_cast<caf::actor>(std::move(ptr));
        else
          failure = caf::sec::no_actor_published_at_port;
      },
      [&](caf::error& e) { failure = std::move(e); });
  if (found || failure == caf::sec::cannot_connect_to_node ||
      failure == caf::sec::connection_timeout)
    return found;
  if (failure == caf::sec::request_timeout)
    throw timeout_error("no answer from " + at.to_string() +
                        " (a listener that is not a troupe peer, or a frozen one?)");
  if (failure == caf::sec::disconnect_during_handshake)
    throw network_error(at.to_string() + " closed the connection during the handshake" +
                        (tls ? ": it refused this process's certificate, or does not use TLS"
                             : ": it may expect TLS"));
  if (failure == caf::sec::no_actor_published_at_port)
    throw network_error("nothing is published at " + at.to_string());
  throw network_error("cannot connect to " + at.to_string() + ": " +
                      rt.system->render(failure));
}

} // namespace

caf::actor connect(runtime_state& rt, const endpoint& at, bool tls,
                   std::chrono::steady_clock::time_point deadline) {
  using namespace std::chrono_literals;
  for (;;) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= 0s)
      throw timeout_error("nothing answered at " + at.to_string() + " in time");
    if (auto found = try_connect(rt, at, tls, std::chrono::ceil<caf::timespan>(left)))
      return *found;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(left, 50ms));
  }
}

} // namespace troupe::detail
