#include "handshake.hpp"

#include "troupe/actors/peer_proof.hpp"

#include <openssl/err.h>
#include <openssl/x509.h>

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <iostream>

namespace troupe::detail {

namespace {

using clock = std::chrono::steady_clock;
using reason = handshake_failure::reason;

constexpr std::string_view magic = "troupe/1";
constexpr std::size_t nonce_size = 64; // make_nonce(): 32 random bytes, hex
constexpr std::size_t proof_size = 64; // proof_of(): HMAC-SHA256, hex
constexpr std::size_t max_name = 255;

/// The nonce of a hello that refuses: the listener requires TLS and the joiner has none.
constexpr char refusal_mark = '!';

enum class verdict : char { admitted = 0, wrong_secret = 1, name_refused = 2 };

/// The IP address of the socket's other end, or of this end with `local`.
std::string address_of(int fd, bool local = false) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  auto* raw_address = reinterpret_cast<sockaddr*>(&address);
  if ((local ? getsockname(fd, raw_address, &length) : getpeername(fd, raw_address, &length)) != 0)
    return {};
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw =
    address.ss_family == AF_INET6
      ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6&>(address).sin6_addr)
      : static_cast<const void*>(&reinterpret_cast<sockaddr_in&>(address).sin_addr);
  return inet_ntop(address.ss_family, raw, text, sizeof text) != nullptr ? text : "";
}

/// Blocking reads and writes on a non-blocking socket, each waiting until the deadline at most.
class deadline_io {
public:
  deadline_io(int fd, SSL* session, clock::time_point deadline)
    : fd_(fd), session_(session), deadline_(deadline) {}

  void tls_handshake(link_side side) {
    tls_call(
      [&] { return side == link_side::listener ? SSL_accept(session_) : SSL_connect(session_); },
      "the TLS handshake");
  }

  void write_all(std::string_view bytes) {
    while (!bytes.empty()) {
      const auto n = session_ != nullptr ? write_tls(bytes) : write_plain(bytes);
      bytes.remove_prefix(n);
    }
  }

  std::string read_exact(std::size_t size) {
    std::string bytes(size, '\0');
    std::size_t got = 0;
    while (got < size)
      got += session_ != nullptr ? read_tls(bytes.data() + got, size - got)
                                 : read_plain(bytes.data() + got, size - got);
    return bytes;
  }

private:
  void wait(short events) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - clock::now());
    if (left.count() <= 0)
      throw handshake_failure(reason::timed_out, "the handshake did not finish in time");
    pollfd entry{fd_, events, 0};
    const int ready = poll(&entry, 1, static_cast<int>(std::min<long long>(left.count(), 60'000)));
    if (ready < 0 && errno != EINTR)
      throw handshake_failure(reason::closed, std::string{"poll failed: "} + std::strerror(errno));
  }

  /// Runs an OpenSSL call until it succeeds; returns its positive result. The thread's error
  /// queue is emptied first, so that SSL_get_error reads this call's error and no other's.
  template <class Call>
  int tls_call(Call call, const char* what) {
    for (;;) {
      ERR_clear_error();
      const int result = call();
      if (result > 0)
        return result;
      switch (SSL_get_error(session_, result)) {
      case SSL_ERROR_WANT_READ: wait(POLLIN); break;
      case SSL_ERROR_WANT_WRITE: wait(POLLOUT); break;
      case SSL_ERROR_ZERO_RETURN:
      case SSL_ERROR_SYSCALL: throw closed_during(what);
      default:
        // OpenSSL 3 reports a peer's close without a TLS alert as an error of its own.
        if (ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING)
          throw closed_during(what);
        throw handshake_failure(reason::tls, tls_failure(what));
      }
    }
  }

  static handshake_failure closed_during(const char* what) {
    ERR_clear_error();
    return handshake_failure(reason::closed,
                             std::string{"the peer closed the connection during "} + what);
  }

  std::string tls_failure(const char* what) {
    std::string text = std::string{what} + " failed: " + openssl_errors();
    const long verified = SSL_get_verify_result(session_);
    if (verified != X509_V_OK)
      text += " (certificate: " + std::string{X509_verify_cert_error_string(verified)} + ")";
    return text;
  }

  std::size_t write_tls(std::string_view bytes) {
    return static_cast<std::size_t>(
      tls_call([&] { return SSL_write(session_, bytes.data(), static_cast<int>(bytes.size())); },
               "a write"));
  }

  std::size_t read_tls(char* into, std::size_t size) {
    return static_cast<std::size_t>(
      tls_call([&] { return SSL_read(session_, into, static_cast<int>(size)); }, "a read"));
  }

  std::size_t write_plain(std::string_view bytes) {
    for (;;) {
      const auto n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n > 0)
        return static_cast<std::size_t>(n);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        wait(POLLOUT);
      else if (n < 0 && errno != EINTR)
        throw handshake_failure(reason::closed,
                                "the peer closed the connection during the handshake");
    }
  }

  std::size_t read_plain(char* into, std::size_t size) {
    for (;;) {
      const auto n = recv(fd_, into, size, 0);
      if (n > 0)
        return static_cast<std::size_t>(n);
      if (n == 0)
        throw handshake_failure(reason::closed,
                                "the peer closed the connection during the handshake");
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        wait(POLLIN);
      else if (errno != EINTR)
        throw handshake_failure(reason::closed,
                                std::string{"a read failed: "} + std::strerror(errno));
    }
  }

  int fd_;
  SSL* session_;
  clock::time_point deadline_;
};

struct hello {
  std::string nonce;
  std::string name;
};

void send_hello(deadline_io& io, const hello& mine) {
  std::string bytes{magic};
  bytes += mine.nonce;
  bytes += static_cast<char>(mine.name.size());
  bytes += mine.name;
  io.write_all(bytes);
}

hello read_hello(deadline_io& io) {
  const auto head = io.read_exact(magic.size() + nonce_size + 1);
  if (std::string_view{head}.substr(0, magic.size()) != magic)
    throw handshake_failure(reason::not_troupe, "the peer does not speak troupe's handshake");
  const auto name_size = static_cast<unsigned char>(head.back());
  hello said{head.substr(magic.size(), nonce_size), io.read_exact(name_size)};
  if (said.nonce == std::string(nonce_size, refusal_mark))
    throw handshake_failure(reason::name_refused, "the listener refused: " + said.name);
  return said;
}

/// What `side` sends to prove the secret: bound to the nonce it was challenged with, its own,
/// and both names, so that no proof serves another connection or another claim.
std::string proof(const std::string& secret, link_side side, const hello& own, const hello& other) {
  std::string message = side == link_side::listener ? "listener" : "joiner";
  for (const auto* part : {&other.nonce, &own.nonce, &own.name, &other.name}) {
    message += '\0';
    message += *part;
  }
  return proof_of(secret, message);
}

link_side other_side(link_side side) {
  return side == link_side::listener ? link_side::joiner : link_side::listener;
}

/// Whether the peer's certificate names `claimed`, or one of the names allowed instead.
bool certified(SSL* session, const tls_context& tls, const std::string& claimed) {
  if (certificate_names(session, claimed))
    return true;
  const auto& allowed = tls.options().peer_names;
  return std::any_of(allowed.begin(), allowed.end(),
                     [&](const std::string& name) { return certificate_names(session, name); });
}

void prepare_tls(SSL* session, link_side side, const link_policy& policy, const tls_context& tls,
                 const std::string& host) {
  if (side == link_side::joiner && policy.peer_name.empty() && tls.options().verify_host)
    require_host(session, host);
}

} // namespace

bool refused_plain_joiner(int fd, clock::time_point deadline) {
  char first[magic.size()] = {};
  // poll wakes only once all of the first bytes are there (or the peer closed): a peer that
  // sends one byte and falls silent costs a sleeping thread, not a loop.
  int low_water = static_cast<int>(sizeof first);
  setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &low_water, sizeof low_water);
  for (;;) {
    const auto n = recv(fd, first, sizeof first, MSG_PEEK);
    if (n == static_cast<ssize_t>(sizeof first) || n == 0 ||
        (n < 0 && errno != EAGAIN && errno != EINTR))
      break;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
    pollfd entry{fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&entry, 1, static_cast<int>(left.count())) <= 0)
      return false;
  }
  low_water = 1;
  setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &low_water, sizeof low_water);
  if (std::string_view{first, sizeof first} != magic)
    return false;
  deadline_io io{fd, nullptr, deadline};
  send_hello(io, {std::string(nonce_size, refusal_mark), "this listener requires TLS"});
  return true;
}

peer_identity shake_hands(int fd, SSL* session, link_side side, const link_policy& policy,
                          const tls_context* tls, const std::string& host,
                          clock::time_point deadline) {
  if (policy.name.size() > max_name)
    throw invalid_argument("a name of more than " + std::to_string(max_name) +
                           " bytes cannot be claimed: '" + policy.name.substr(0, 40) + "...'");
  deadline_io io{fd, session, deadline};
  if (session != nullptr) {
    prepare_tls(session, side, policy, *tls, host);
    io.tls_handshake(side);
  }
  const hello own{make_nonce(), policy.name};
  send_hello(io, own);
  const hello other = read_hello(io);
  peer_identity peer{other.name, address_of(fd), address_of(fd, true), !policy.secret.empty(),
                     session != nullptr};
  const bool name_certified = session == nullptr || certified(session, *tls, other.name);
  // A joiner that expects no name has checked the listener's host instead (prepare_tls).
  const bool name_ok =
    side == link_side::listener
      ? name_certified
      : policy.peer_name.empty() || (other.name == policy.peer_name && name_certified);
  io.write_all(proof(policy.secret, side, own, other));
  const bool secret_ok =
    same_proof(io.read_exact(proof_size), proof(policy.secret, other_side(side), other, own));
  if (side == link_side::listener) {
    const auto said = !secret_ok ? verdict::wrong_secret
                      : !name_ok ? verdict::name_refused
                                 : verdict::admitted;
    io.write_all(std::string(1, static_cast<char>(said)));
    if (said == verdict::wrong_secret)
      throw handshake_failure(reason::wrong_secret,
                              "'" + other.name + "' did not prove the secret");
    if (said == verdict::name_refused)
      throw handshake_failure(reason::name_refused,
                              "the certificate of '" + other.name + "' does not name it");
    return peer;
  }
  if (!secret_ok)
    throw handshake_failure(
      reason::wrong_secret,
      "the listener does not prove this process's secret (another secret, or none)");
  if (!name_ok)
    throw handshake_failure(reason::name_refused,
                            "the listener is '" + other.name + "'" +
                              (policy.peer_name.empty() ? "" : ", not '" + policy.peer_name + "'") +
                              (session != nullptr ? ", or its certificate does not name it" : ""));
  const auto said = static_cast<verdict>(io.read_exact(1)[0]);
  if (said == verdict::wrong_secret)
    throw handshake_failure(
      reason::wrong_secret,
      "the listener refused this process's proof of the secret (another secret, or none)");
  if (said != verdict::admitted)
    throw handshake_failure(reason::name_refused,
                            "the listener refused the name '" + policy.name +
                              "': this process's certificate does not name it");
  return peer;
}

} // namespace troupe::detail
