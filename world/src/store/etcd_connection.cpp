#include "etcd_connection.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "troupe/actors/error.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <openssl/ssl.h>

#include <fstream>

namespace troupe::detail::etcd {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;

namespace {

/// The largest reply head etcd's gateway could need (it sends a handful of short fields).
constexpr std::uint32_t max_head_bytes = 8 * 1024;

} // namespace

connection::connection(store_endpoint endpoint, std::shared_ptr<asio::ssl::context> tls,
                       std::size_t max_reply_bytes)
  : endpoint_{std::move(endpoint)}, tls_{std::move(tls)},
    max_reply_bytes_{max_reply_bytes}, buffer_{max_reply_bytes + max_head_bytes} {}

connection::~connection() = default;

void connection::fail(std::string_view step, const std::string& why) {
  close();
  throw network_error("etcd at " + endpoint_.text() + ": " + std::string{step} + ": " + why);
}

// Runs one asynchronous step on this thread until it completes or `deadline` passes; past it,
// the socket is closed (which completes the step) and the step fails with timeout_error.
template <class Operation>
void connection::run(Operation start, clock::time_point deadline, std::string_view step) {
  if (cancelled_.load())
    fail(step, "the connection was cancelled");
  std::optional<error_code> outcome;
  start([&outcome](error_code ec, auto&&...) { outcome = ec; });
  io_.restart();
  io_.run_until(deadline);
  if (!outcome) {
    close();
    io_.restart();
    io_.run();
    throw timeout_error("etcd at " + endpoint_.text() + ": " + std::string{step} +
                        " did not finish in time");
  }
  if (cancelled_.load())
    fail(step, "the connection was cancelled");
  if (*outcome)
    fail(step, outcome->message());
}

template <class Action>
void connection::on_stream(Action action) {
  if (tls_stream_)
    action(*tls_stream_);
  else
    action(*socket_);
}

void connection::open(clock::time_point deadline) {
  if (socket_ || tls_stream_)
    return;
  tcp::resolver resolver{io_};
  tcp::resolver::results_type addresses;
  run(
    [&](auto done) {
      resolver.async_resolve(endpoint_.host, std::to_string(endpoint_.port),
                             [&addresses, done](error_code ec, tcp::resolver::results_type r) {
                               addresses = std::move(r);
                               done(ec);
                             });
    },
    deadline, "resolving its host");
  if (tls_) {
    tls_stream_.emplace(io_, *tls_);
    tls_stream_->set_verify_mode(asio::ssl::verify_peer);
    tls_stream_->set_verify_callback(asio::ssl::host_name_verification(endpoint_.host));
    SSL_set_tlsext_host_name(tls_stream_->native_handle(), endpoint_.host.c_str());
  } else {
    socket_.emplace(io_);
  }
  auto& socket = tls_stream_ ? tls_stream_->next_layer() : *socket_;
  run([&](auto done) { asio::async_connect(socket, addresses, done); }, deadline, "connecting");
  socket.set_option(tcp::no_delay{true});
  if (tls_stream_)
    run([&](auto done) { tls_stream_->async_handshake(asio::ssl::stream_base::client, done); },
        deadline, "the TLS handshake");
}

void connection::close() {
  error_code ignored;
  if (tls_stream_)
    tls_stream_->next_layer().close(ignored);
  if (socket_)
    socket_->close(ignored);
  tls_stream_.reset();
  socket_.reset();
  buffer_.clear();
}

void connection::cancel() {
  cancelled_.store(true);
  asio::post(io_, [this] {
    error_code ignored;
    if (tls_stream_)
      tls_stream_->next_layer().close(ignored);
    if (socket_)
      socket_->close(ignored);
  });
}

void connection::send(std::string_view path, const nlohmann::json& body, clock::time_point deadline,
                      bool needs_leader) {
  open(deadline);
  http::request<http::string_body> request{http::verb::post, std::string{path}, 11};
  request.set(http::field::host, endpoint_.text());
  request.set(http::field::content_type, "application/json");
  if (needs_leader) // the gateway's way to gRPC's "require leader": a cut-off server ends the
                    // stream
    request.set("Grpc-Metadata-hasleader", "true");
  request.body() = body.dump();
  request.prepare_payload();
  on_stream([&](auto& stream) {
    run([&](auto done) { http::async_write(stream, request, done); }, deadline, "sending");
  });
}

reply connection::post(std::string_view path, const nlohmann::json& body,
                       clock::time_point deadline) {
  send(path, body, deadline, false);
  http::response_parser<http::string_body> parser;
  parser.header_limit(max_head_bytes);
  parser.body_limit(max_reply_bytes_);
  on_stream([&](auto& stream) {
    run([&](auto done) { http::async_read(stream, buffer_, parser, done); }, deadline,
        "reading its reply");
  });
  auto response = parser.release();
  if (!response.keep_alive())
    close();
  auto document = nlohmann::json::parse(response.body(), nullptr, false);
  if (document.is_discarded())
    fail("reading its reply",
         "not JSON (HTTP status " + std::to_string(response.result_int()) + ")");
  return {response.result_int(), std::move(document)};
}

void connection::stream(std::string_view path, const nlohmann::json& body,
                        clock::time_point deadline, std::chrono::milliseconds idle,
                        const std::function<bool(const nlohmann::json&)>& on_document) {
  send(path, body, deadline, true);
  http::response_parser<http::string_body> parser;
  parser.header_limit(max_head_bytes);
  parser.body_limit(boost::none); // the stream has no end; each document is bounded below
  std::string line;
  bool wanted = true;
  std::optional<std::string> broken;
  // Documents come one a line, split across chunks as the server likes.
  auto take = [&](std::uint64_t, boost::beast::string_view bytes, error_code&) -> std::size_t {
    for (const char byte : bytes) {
      if (!wanted || broken)
        break;
      if (byte != '\n') {
        line.push_back(byte);
        if (line.size() > max_reply_bytes_)
          broken = "a streamed document over " + readable_bytes(max_reply_bytes_);
        continue;
      }
      auto document = nlohmann::json::parse(line, nullptr, false);
      line.clear();
      if (document.is_discarded())
        broken = "a streamed document that is not JSON";
      else
        wanted = on_document(document);
    }
    return bytes.size();
  };
  parser.on_chunk_body(take);
  on_stream([&](auto& stream) {
    run([&](auto done) { http::async_read_header(stream, buffer_, parser, done); }, deadline,
        "reading its reply's head");
  });
  if (parser.get().result_int() != 200 || !parser.chunked())
    fail("streaming", "HTTP status " + std::to_string(parser.get().result_int()) +
                        (parser.chunked() ? "" : ", not a stream"));
  while (wanted && !broken && !parser.is_done()) {
    try {
      on_stream([&](auto& stream) {
        run([&](auto done) { http::async_read_some(stream, buffer_, parser, done); },
            clock::now() + idle, "streaming");
      });
    } catch (const network_error&) {
      if (cancelled_.load())
        return;
      throw;
    }
  }
  close(); // a stream is not reused: the server would go on sending on it
  if (broken)
    fail("streaming", *broken);
}

std::shared_ptr<asio::ssl::context> client_tls(const std::string& certificate,
                                               const std::string& key, const std::string& ca_file,
                                               const std::string& passphrase) {
  for (const auto* file : {&certificate, &key, &ca_file})
    if (!std::ifstream{*file})
      throw invalid_argument("TLS for the world's store: cannot read '" + *file + "'");
  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
  context->set_options(asio::ssl::context::no_sslv2 | asio::ssl::context::no_sslv3 |
                       asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
  try {
    context->set_password_callback(
      [passphrase](std::size_t, asio::ssl::context::password_purpose) { return passphrase; });
    context->load_verify_file(ca_file);
    context->use_certificate_chain_file(certificate);
    context->use_private_key_file(key, asio::ssl::context::pem);
  } catch (const boost::system::system_error& e) {
    throw invalid_argument("TLS for the world's store: " + std::string{e.what()} +
                           " (certificate '" + certificate + "', key '" + key + "', CA '" +
                           ca_file + "')");
  }
  return context;
}

} // namespace troupe::detail::etcd
