#include "tcp_link.hpp"

#include "chunk_runner.hpp"

#include "troupe/actors/serialization.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/actors/runtime.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace troupe::detail {

namespace {

using namespace std::chrono_literals;

// A stranger holds up the accepting thread for at most this long, and a greeting is small; a
// node waits for its answer long enough to sit behind a few such strangers.
constexpr auto handshake_timeout = 2000ms;
constexpr std::uint32_t max_greeting = 4096;
constexpr auto node_answer_timeout = 15s;

/// Installed at static initialisation: `--troupe-join=HOST:PORT` makes this program a node.
const bool join_main_installed = (install_join_main(&run_remote_node), true);

/// Secrets compared in constant time, so timing does not leak how much of one matched.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char differ = a.size() != b.size();
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    differ |= static_cast<unsigned char>(a[i] ^ b[i]);
  return differ == 0;
}

std::span<const std::byte> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

} // namespace

frame_socket::~frame_socket() { ::close(fd_); }

void frame_socket::shut() {
  ::shutdown(fd_, SHUT_RDWR);
  closed_ = true;
}

std::string frame_socket::peer() const {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  char host[NI_MAXHOST] = "?", service[NI_MAXSERV] = "?";
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    getnameinfo(reinterpret_cast<sockaddr*>(&address), length, host, sizeof host, service,
                sizeof service, NI_NUMERICHOST | NI_NUMERICSERV);
  return std::string{host} + ":" + service;
}

bool frame_socket::write(frame_kind kind, std::span<const std::byte> bytes) {
  std::lock_guard guard{write_mutex_};
  if (closed_)
    return false;
  std::uint32_t header[2] = {static_cast<std::uint32_t>(kind), static_cast<std::uint32_t>(bytes.size())};
  const auto put = [&](const void* data, std::size_t size) {
    auto p = static_cast<const char*>(data);
    while (size > 0) {
      const auto n = ::send(fd_, p, size, MSG_NOSIGNAL);
      if (n <= 0) {
        if (n < 0 && errno == EINTR)
          continue;
        closed_ = true;
        return false;
      }
      p += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
  };
  return put(header, sizeof header) && put(bytes.data(), bytes.size());
}

bool frame_socket::read_exactly(std::byte* out, std::size_t bytes,
                                std::chrono::steady_clock::time_point until) {
  while (bytes > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      until - std::chrono::steady_clock::now());
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::max<long>(0, left.count())));
    if (ready == 0)
      return false;
    const auto n = ::recv(fd_, out, bytes, 0);
    if (n <= 0) {
      if (n < 0 && errno == EINTR)
        continue;
      closed_ = true;
      return false;
    }
    out += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<std::pair<frame_kind, std::vector<std::byte>>>
frame_socket::read(std::chrono::milliseconds wait, std::uint32_t limit,
                   std::chrono::milliseconds rest) {
  if (closed_)
    return std::nullopt;
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0)
    return std::nullopt;
  const auto until = std::chrono::steady_clock::now() + rest;
  std::uint32_t header[2];
  if (!read_exactly(reinterpret_cast<std::byte*>(header), sizeof header, until))
    return std::nullopt;
  if (header[1] > limit) {
    shut(); // not a peer of ours
    return std::nullopt;
  }
  std::vector<std::byte> body(header[1]);
  if (!read_exactly(body.data(), body.size(), until))
    return std::nullopt;
  return std::pair{static_cast<frame_kind>(header[0]), std::move(body)};
}

tcp_link::tcp_link(std::unique_ptr<frame_socket> socket, std::chrono::milliseconds heartbeat_timeout)
  : socket_(std::move(socket)), heartbeat_timeout_(heartbeat_timeout),
    last_heard_(std::chrono::steady_clock::now()), label_("node " + socket_->peer()) {}

bool tcp_link::send(const request_batch& requests) {
  return socket_->write(frame_kind::batch, serialize(requests));
}

std::optional<reply_batch> tcp_link::receive(std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      until - std::chrono::steady_clock::now());
    auto frame = socket_->read(std::max(left, 0ms));
    if (!frame)
      return std::nullopt;
    last_heard_ = std::chrono::steady_clock::now();
    if (frame->first == frame_kind::batch) {
      try {
        return deserialize<reply_batch>(frame->second);
      } catch (const serialization_error&) {
        socket_->shut(); // a node that sends garbage is treated as gone
        return std::nullopt;
      }
    }
    // Heartbeats queued while the link sat idle are all read before giving up, so a silent
    // node is told from an idle one by what is there now, not by what was read last.
  }
}

bool tcp_link::alive() {
  return !socket_->closed() && std::chrono::steady_clock::now() - last_heard_ < heartbeat_timeout_;
}

std::string tcp_link::lost_reason() const {
  return socket_->closed() ? "closed its connection"
                           : "stopped answering (no heartbeat for " +
                               std::to_string(heartbeat_timeout_.count()) + " ms)";
}

void tcp_link::kill() { socket_->shut(); }

node_listener::node_listener(const std::string& address, std::uint16_t port, std::string secret,
                             std::chrono::milliseconds heartbeat_timeout,
                             std::function<void(std::shared_ptr<worker_link>)> joined)
  : secret_(std::move(secret)), heartbeat_timeout_(heartbeat_timeout), joined_(std::move(joined)) {
  (void)join_main_installed;
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_port = htons(port);
  if (inet_pton(AF_INET, address.c_str(), &where.sin_addr) != 1)
    throw invalid_argument("process_pool_options::listen_address '" + address +
                           "' is not an IPv4 address");
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int yes = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&where), sizeof where) != 0 || ::listen(fd_, 16) != 0) {
    const int failure = errno;
    ::close(fd_);
    throw invalid_argument("cannot listen on " + address + ":" + std::to_string(port) + ": " +
                           std::strerror(failure));
  }
  socklen_t length = sizeof where;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&where), &length);
  port_ = ntohs(where.sin_port);
  thread_ = std::thread([this] { serve(); });
}

node_listener::~node_listener() {
  stop_ = true;
  thread_.join();
  ::close(fd_);
}

void node_listener::serve() {
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0)
      continue;
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    const int yes = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    auto socket = std::make_unique<frame_socket>(fd);
    auto hello = socket->read(handshake_timeout, max_greeting, handshake_timeout);
    const std::string offered = hello && hello->first == frame_kind::hello
                                  ? std::string{reinterpret_cast<const char*>(hello->second.data()),
                                                hello->second.size()}
                                  : std::string{};
    if (!hello || hello->first != frame_kind::hello || !same_secret(offered, secret_)) {
      std::cerr << "troupe: refused a worker node from " << socket->peer()
                << (hello ? ": wrong secret" : ": no greeting") << std::endl;
      socket->write(frame_kind::refused, {});
      continue;
    }
    socket->write(frame_kind::welcome, {});
    joined_(std::make_shared<tcp_link>(std::move(socket), heartbeat_timeout_));
  }
}

namespace {

/// One worker slot: connects, serves batches until the pool closes the connection.
int serve_one_slot(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    std::cerr << "troupe: --troupe-join needs HOST:PORT, got '" << address << "'\n";
    return 2;
  }
  const std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) {
    std::cerr << "troupe: cannot resolve " << address << "\n";
    return 2;
  }
  const int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  const bool connected = fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0;
  freeaddrinfo(found);
  if (!connected) {
    std::cerr << "troupe: cannot connect to the pool at " << address << "\n";
    return 2;
  }
  const int yes = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  frame_socket socket{fd};
  const char* secret = std::getenv("TROUPE_SECRET");
  socket.write(frame_kind::hello, bytes_of(secret != nullptr ? secret : ""));
  auto answer = socket.read(node_answer_timeout);
  if (!answer || answer->first != frame_kind::welcome) {
    std::cerr << "troupe: the pool at " << address << " refused this node (wrong TROUPE_SECRET?)\n";
    return 1;
  }
  std::atomic<bool> done{false};
  std::thread heartbeat([&] {
    while (!done && socket.write(frame_kind::heartbeat, {}))
      std::this_thread::sleep_for(20ms);
  });
  chunk_runner runner{0, "node " + std::to_string(getpid()), ""};
  while (!socket.closed()) {
    auto frame = socket.read(200ms);
    if (!frame || frame->first != frame_kind::batch)
      continue;
    request_batch batch;
    try {
      batch = deserialize<request_batch>(frame->second);
    } catch (const serialization_error&) {
      continue;
    }
    if (batch.slot)
      runner.set_index(*batch.slot);
    if (batch.context)
      runner.install(*batch.context);
    reply_batch replies;
    for (const auto& request : batch.chunks)
      replies.chunks.push_back(runner.run(request));
    socket.write(frame_kind::batch, serialize(replies));
  }
  done = true;
  heartbeat.join();
  return 0;
}

} // namespace

int run_remote_node(const std::string& address) {
  // TROUPE_NODE_WORKERS slots per node, one process each. This runs from runtime's constructor
  // before the actor system starts any thread, so forking is safe.
  int slots = 1;
  if (const char* wanted = std::getenv("TROUPE_NODE_WORKERS"); wanted != nullptr && *wanted) {
    char* end = nullptr;
    const long n = std::strtol(wanted, &end, 10);
    if (*end != '\0' || n < 1 || n > 1024) {
      std::cerr << "troupe: TROUPE_NODE_WORKERS must be a number from 1 to 1024, got '" << wanted
                << "'\n";
      return 2;
    }
    slots = static_cast<int>(n);
  }
  std::vector<pid_t> siblings;
  for (int i = 1; i < slots; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL); // killing the node kills all its slots
      std::exit(serve_one_slot(address));
    }
    if (pid > 0)
      siblings.push_back(pid);
  }
  int status = serve_one_slot(address);
  for (pid_t pid : siblings) {
    int sibling = 0;
    waitpid(pid, &sibling, 0);
    if (status == 0)
      status = WIFEXITED(sibling) ? WEXITSTATUS(sibling) : 1;
  }
  return status;
}

} // namespace troupe::detail
