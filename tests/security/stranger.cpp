#include "stranger.hpp"

#include "troupe/actors/peer_proof.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace troupe::testing {

namespace {

using clock = std::chrono::steady_clock;

} // namespace

raw_connection::raw_connection(int port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    throw std::runtime_error(std::string{"stranger cannot connect: "} + std::strerror(errno));
}

raw_connection::~raw_connection() { ::close(fd_); }

void raw_connection::send(std::string_view bytes) {
  (void)::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
}

std::string raw_connection::receive(std::size_t size, std::chrono::milliseconds limit) {
  std::string bytes;
  const auto until = clock::now() + limit;
  while (bytes.size() < size) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - clock::now());
    pollfd entry{fd_, POLLIN, 0};
    if (left.count() <= 0 || poll(&entry, 1, static_cast<int>(left.count())) != 1)
      break;
    char buffer[4096];
    const auto n = ::recv(fd_, buffer, std::min(sizeof buffer, size - bytes.size()), 0);
    if (n <= 0)
      break;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  return bytes;
}

bool raw_connection::closed_within(std::chrono::milliseconds limit) {
  const auto until = clock::now() + limit;
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - clock::now());
    pollfd entry{fd_, POLLIN, 0};
    if (left.count() <= 0 || poll(&entry, 1, static_cast<int>(left.count())) != 1)
      return false;
    char buffer[4096];
    if (::recv(fd_, buffer, sizeof buffer, 0) <= 0)
      return true;
  }
}

handshake_outcome handshake_as(raw_connection& c, const std::string& secret,
                               const std::string& name) {
  const std::string magic = "troupe/1";
  const auto mine = troupe::detail::make_nonce();
  c.send(magic + mine + static_cast<char>(name.size()) + name);
  const auto head = c.receive(magic.size() + 64 + 1, std::chrono::seconds{5});
  if (head.empty())
    return handshake_outcome::closed_at_once;
  if (head.size() < magic.size() + 65)
    return handshake_outcome::refused;
  const auto theirs = head.substr(magic.size(), 64);
  const auto their_name =
    c.receive(static_cast<unsigned char>(head.back()), std::chrono::seconds{5});
  std::string message = "joiner";
  for (const auto* part : {&theirs, &mine, &name, &their_name}) {
    message += '\0';
    message += *part;
  }
  c.send(troupe::detail::proof_of(secret, message));
  const auto rest = c.receive(64 + 1, std::chrono::seconds{5});
  return rest.size() == 65 && rest.back() == 0 ? handshake_outcome::admitted
                                               : handshake_outcome::refused;
}

std::string basp_header(std::uint8_t op, std::uint32_t payload) {
  std::string header(32, '\0');
  header[0] = static_cast<char>(op);
  const std::uint32_t length = htonl(payload);
  std::memcpy(header.data() + 4, &length, sizeof length);
  return header;
}

} // namespace troupe::testing
