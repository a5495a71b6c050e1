#include "guarded_scribe.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "signals.hpp"
#include "tls_context.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/io/basp/header.hpp>
#include <caf/policy/tcp.hpp>

#include <openssl/err.h>
#include <sys/socket.h>

#include <cerrno>
#include <iostream>

namespace troupe::detail {

namespace network = caf::io::network;
using network::rw_state;

link_io::~link_io() { SSL_free(session_); }

namespace {

/// One TLS read or write. Every connection's reads and writes run on CAF's one multiplexer
/// thread: an error another connection left in the thread's queue would make SSL_get_error fail
/// this healthy one, so the queue is emptied before and after. `again` is what CAF is told when
/// OpenSSL needs the socket again (a read: nothing now; a write: nothing written, keep the data).
template <class Call>
rw_state tls_step(SSL* session, std::size_t& result, rw_state again, Call call) {
  ERR_clear_error();
  const int n = call();
  if (n > 0) {
    result = static_cast<std::size_t>(n);
    return rw_state::success;
  }
  const int error = SSL_get_error(session, n);
  ERR_clear_error();
  return error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE ? again : rw_state::failure;
}

int clamped(std::size_t size) { return static_cast<int>(std::min<std::size_t>(size, INT32_MAX)); }

} // namespace

rw_state link_io::read_some(std::size_t& result, network::native_socket fd, void* buffer,
                            std::size_t size) {
  result = 0;
  if (session_ == nullptr)
    return caf::policy::tcp::read_some(result, fd, buffer, size);
  if (size == 0)
    return rw_state::indeterminate;
  return tls_step(session_, result, rw_state::indeterminate,
                  [&] { return SSL_read(session_, buffer, clamped(size)); });
}

rw_state link_io::write_some(std::size_t& result, network::native_socket fd, const void* buffer,
                             std::size_t size) {
  result = 0;
  if (session_ == nullptr)
    return caf::policy::tcp::write_some(result, fd, buffer, size);
  if (size == 0)
    return rw_state::indeterminate;
  block_sigpipe_on_this_thread();
  return tls_step(session_, result, rw_state::success,
                  [&] { return SSL_write(session_, buffer, clamped(size)); });
}

bool link_io::must_read_more(network::native_socket, std::size_t) {
  return session_ != nullptr && SSL_pending(session_) > 0;
}

guarded_scribe::guarded_scribe(network::default_multiplexer& mpx, admitted_link link,
                               std::shared_ptr<peer_registry> peers)
  : caf::io::scribe(network::conn_hdl_from_socket(link.fd)), peer_(link.peer),
    max_message_bytes_(link.max_message_bytes), peers_(std::move(peers)),
    stream_(mpx, link.fd, link.session) {
  link.release(); // the stream closes the socket, link_io frees the session
}

guarded_scribe::~guarded_scribe() {
  if (node_)
    peers_->remove(node_);
}

void guarded_scribe::configure_read(caf::io::receive_policy::config config) {
  if (config.second > max_message_bytes_ + caf::io::basp::header_size) {
    refuse("a read of " + readable_bytes(config.second) + ", over the limit of " +
           readable_bytes(max_message_bytes_));
    config = caf::io::receive_policy::exactly(1);
  }
  try {
    stream_.configure_read(config);
  } catch (const std::bad_alloc&) {
    refuse("no memory for a message of " + readable_bytes(config.second));
    stream_.configure_read(caf::io::receive_policy::exactly(1));
  }
  if (!launched_) {
    launched_ = true;
    stream_.start(this);
  }
}

void guarded_scribe::ack_writes(bool enable) { stream_.ack_writes(enable); }
std::vector<char>& guarded_scribe::wr_buf() { return stream_.wr_buf(); }
std::vector<char>& guarded_scribe::rd_buf() { return stream_.rd_buf(); }

void guarded_scribe::graceful_shutdown() {
  stream_.graceful_shutdown();
  detach(&stream_.backend(), false);
}

void guarded_scribe::flush() { stream_.flush(this); }

std::string guarded_scribe::addr() const {
  auto address = network::remote_addr_of_fd(stream_.fd());
  return address ? *address : std::string{};
}

std::uint16_t guarded_scribe::port() const {
  auto port = network::remote_port_of_fd(stream_.fd());
  return port ? *port : 0;
}

void guarded_scribe::add_to_loop() { stream_.activate(this); }
void guarded_scribe::remove_from_loop() { stream_.passivate(); }

bool guarded_scribe::consume(caf::execution_unit* ctx, const void* bytes, std::size_t size) {
  if (refused_)
    return true; // the socket's end is on its way
  if (expect_header_) {
    if (!inspect_header(ctx, bytes, size))
      return true;
  } else {
    expect_header_ = true;
    if (payload_is_handshake_ && !node_)
      note_node(ctx, bytes, size);
  }
  return caf::io::scribe::consume(ctx, bytes, size);
}

bool guarded_scribe::inspect_header(caf::execution_unit* ctx, const void* bytes, std::size_t size) {
  namespace basp = caf::io::basp;
  basp::header header;
  caf::binary_deserializer source{ctx, static_cast<const char*>(bytes), size};
  if (size != basp::header_size || source(header)) {
    refuse("a malformed BASP header");
    return false;
  }
  if (header.operation == basp::message_type::routed_message) {
    refuse("a routed message (troupe's processes talk directly)");
    return false;
  }
  if (header.payload_len > max_message_bytes_) {
    refuse("a message of " + readable_bytes(header.payload_len) + ", over the limit of " +
           readable_bytes(max_message_bytes_));
    return false;
  }
  expect_header_ = header.payload_len == 0;
  payload_is_handshake_ = basp::is_handshake(header);
  return true;
}

void guarded_scribe::note_node(caf::execution_unit* ctx, const void* bytes, std::size_t size) {
  caf::binary_deserializer source{ctx, static_cast<const char*>(bytes), size};
  caf::node_id node;
  if (source(node) || !node)
    return; // BASP refuses the handshake itself
  node_ = node;
  peers_->add(node_, peer_);
}

void guarded_scribe::refuse(const std::string& why) {
  if (refused_)
    return;
  refused_ = true;
  std::cerr << "troupe: closing the connection from '" << peer_.name << "' (" << peer_.address
            << "): " << why << std::endl;
  ::shutdown(stream_.fd(), SHUT_RDWR);
}

} // namespace troupe::detail
