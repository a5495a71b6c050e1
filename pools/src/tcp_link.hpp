// Workers on other hosts: a node started as `prog --troupe-join=HOST:PORT` (with the pool's
// secret in TROUPE_SECRET) connects to the pool's listener, proves it knows the secret, and then
// serves request batches like a local worker, over TCP: frames of [kind, length, bytes], and a
// heartbeat frame every 20 ms so a frozen node is noticed as surely as a dead one.
#pragma once

#include "worker_link.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace troupe::detail {

enum class frame_kind : std::uint32_t { hello = 1, welcome = 2, refused = 3, batch = 4, heartbeat = 5 };

/// A connected socket that moves frames; closes on destruction.
class frame_socket {
public:
  explicit frame_socket(int fd) : fd_(fd) {}
  ~frame_socket();
  frame_socket(const frame_socket&) = delete;
  frame_socket& operator=(const frame_socket&) = delete;

  /// False if the peer is gone.
  bool write(frame_kind kind, std::span<const std::byte> bytes);
  /// The next frame, or nullopt if none came within `wait` (closed() tells a gone peer). A
  /// frame that has begun gets `rest` to finish; one over `limit` bytes shuts the socket.
  /// Peers not yet authenticated get small values for both.
  std::optional<std::pair<frame_kind, std::vector<std::byte>>>
  read(std::chrono::milliseconds wait, std::uint32_t limit = std::uint32_t{1} << 30,
       std::chrono::milliseconds rest = std::chrono::seconds{30});
  bool closed() const noexcept { return closed_; }
  void shut();
  std::string peer() const;

private:
  bool read_exactly(std::byte* out, std::size_t bytes, std::chrono::steady_clock::time_point until);
  int fd_;
  bool closed_ = false;
  std::mutex write_mutex_; // the node's heartbeat thread writes too
};

/// A remote node, seen from the pool.
class tcp_link final : public worker_link {
public:
  tcp_link(std::unique_ptr<frame_socket> socket, std::chrono::milliseconds heartbeat_timeout);
  bool send(const request_batch& requests) override;
  std::optional<reply_batch> receive(std::chrono::milliseconds wait) override;
  bool alive() override;
  std::string lost_reason() const override;
  void kill() override;
  const std::string& label() const noexcept override { return label_; }

private:
  std::unique_ptr<frame_socket> socket_;
  std::chrono::milliseconds heartbeat_timeout_;
  std::chrono::steady_clock::time_point last_heard_;
  std::string label_;
};

/// The pool's listener: accepts nodes that present the secret and hands each over as a link.
class node_listener {
public:
  node_listener(const std::string& address, std::uint16_t port, std::string secret,
                std::chrono::milliseconds heartbeat_timeout,
                std::function<void(std::shared_ptr<worker_link>)> joined);
  ~node_listener();
  std::uint16_t port() const noexcept { return port_; }

private:
  void serve();
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::string secret_;
  std::chrono::milliseconds heartbeat_timeout_;
  std::function<void(std::shared_ptr<worker_link>)> joined_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

/// The node's side: installed as runtime's join main.
int run_remote_node(const std::string& address);

} // namespace troupe::detail
