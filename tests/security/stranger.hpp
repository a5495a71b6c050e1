// A stranger on troupe's ports, for the security tests: raw TCP connections that say nothing,
// close at once, send troupe's handshake with a guessed secret, or forge CAF's frames after it.
// Everything it does goes to 127.0.0.1 and is bounded in time.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace troupe::testing {

/// A TCP connection from a stranger to 127.0.0.1:port.
class raw_connection {
public:
  explicit raw_connection(int port);
  ~raw_connection();
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;

  void send(std::string_view bytes);
  /// Reads exactly `size` bytes within `limit`; shorter if the other end closed or time ran out.
  std::string receive(std::size_t size, std::chrono::milliseconds limit);
  /// Whether the other end closes the connection within `limit` (what it sends is dropped).
  bool closed_within(std::chrono::milliseconds limit);
  int fd() const noexcept { return fd_; }

private:
  int fd_ = -1;
};

/// Outcomes of troupe's handshake made by hand as a joiner without TLS.
enum class handshake_outcome { admitted, refused, closed_at_once };

/// Makes troupe's handshake on `c` as a joiner called `name` that believes the secret is
/// `secret`.
handshake_outcome handshake_as(raw_connection& c, const std::string& secret,
                               const std::string& name);

/// A BASP header (32 bytes) of operation `op` announcing a payload of `payload` bytes.
std::string basp_header(std::uint8_t op, std::uint32_t payload);

} // namespace troupe::testing
