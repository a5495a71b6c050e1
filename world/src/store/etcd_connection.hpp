// One HTTP/1.1 connection to one etcd server's JSON gateway (its v3 API, as etcd 3.4 serves it
// beside gRPC on the client port), plain or TLS with a client certificate. Every step (resolve,
// connect, handshake, write, read) has a deadline; a reply's size is bounded before it is read.
// One thread uses a connection at a time; cancel() may come from any thread.
//
// Why the gateway and Boost.Beast rather than gRPC: Debian packages no C++ code for etcd's
// protocol (its .proto files import gogoproto and Google's API annotations, neither packaged),
// Boost and a JSON library are already troupe's dependencies, and the calls a world makes are
// few and small (none on the path of a call between members).
#pragma once

#include "store_address.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

namespace troupe::detail::etcd {

using clock = std::chrono::steady_clock;

/// What a server answered: its HTTP status and JSON document (an etcd error has "error",
/// "message" and a gRPC "code").
struct reply {
  unsigned status = 0;
  nlohmann::json document;
};

class connection {
public:
  /// Unopened; `tls` null for plain HTTP. A reply over `max_reply_bytes` fails the request.
  connection(store_endpoint endpoint, std::shared_ptr<boost::asio::ssl::context> tls,
             std::size_t max_reply_bytes);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  const store_endpoint& endpoint() const { return endpoint_; }

  /// POSTs `body` to `path` (opening the connection first if needed) and reads the reply.
  /// Throws network_error (unreachable, closed, refused, malformed, too large) or timeout_error
  /// (past `deadline`) naming the server; the connection is closed after any failure.
  reply post(std::string_view path, const nlohmann::json& body, clock::time_point deadline);

  /// POSTs `body` to `path` and hands each JSON document of the streamed reply (etcd's watch:
  /// one a line) to `on_document` until it returns false, cancel() is called (returns), the
  /// server is silent for `idle` or ends the stream, or a document exceeds the reply bound
  /// (throw as post does). `deadline` bounds opening and the reply's head.
  void stream(std::string_view path, const nlohmann::json& body, clock::time_point deadline,
              std::chrono::milliseconds idle,
              const std::function<bool(const nlohmann::json&)>& on_document);

  /// Ends what the connection is doing, from any thread: post() and stream() return (post
  /// throws network_error) and every later use throws.
  void cancel();

private:
  using tcp = boost::asio::ip::tcp;
  using tls_stream = boost::asio::ssl::stream<tcp::socket>;

  void open(clock::time_point deadline);
  void close();
  template <class Operation>
  void run(Operation start, clock::time_point deadline, std::string_view step);
  template <class Action>
  void on_stream(Action action);
  void send(std::string_view path, const nlohmann::json& body, clock::time_point deadline,
            bool needs_leader);
  [[noreturn]] void fail(std::string_view step, const std::string& why);

  store_endpoint endpoint_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  std::size_t max_reply_bytes_;
  boost::asio::io_context io_;
  std::optional<tcp::socket> socket_;
  std::optional<tls_stream> tls_stream_;
  boost::beast::flat_buffer buffer_;
  std::atomic<bool> cancelled_{false};
};

/// A TLS context for etcd's client port: verifies the server against `ca_file` (and its name
/// against the host dialled) and presents `certificate` and `key`. Throws invalid_argument
/// naming a file that cannot be read.
std::shared_ptr<boost::asio::ssl::context> client_tls(const std::string& certificate,
                                                      const std::string& key,
                                                      const std::string& ca_file,
                                                      const std::string& passphrase);

} // namespace troupe::detail::etcd
