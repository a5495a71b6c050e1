// CAF's side of a connection that has finished troupe's handshake: a scribe (what CAF's BASP
// broker reads and writes through) that reads through TLS when the link has a session, and that
// watches BASP's frames go by. It closes the connection when a frame announces more than the
// link's limit, before anything is allocated for it, or when it is routed (troupe's processes
// talk to each other directly, so a routed message could only be a forged sender), and it
// records which CAF node the connection's authenticated peer is (peer_registry). Not installed.
#pragma once

#include "listener.hpp"
#include "peer_registry.hpp"

#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/stream_impl.hpp>
#include <caf/io/scribe.hpp>

namespace troupe::detail {

/// Reads and writes for CAF's stream, through the link's TLS session if it has one.
class link_io {
public:
  explicit link_io(SSL* session) : session_(session) {}
  link_io(link_io&& other) noexcept : session_(std::exchange(other.session_, nullptr)) {}
  link_io(const link_io&) = delete;
  ~link_io();

  caf::io::network::rw_state read_some(std::size_t& result, caf::io::network::native_socket fd,
                                       void* buffer, std::size_t size);
  caf::io::network::rw_state write_some(std::size_t& result, caf::io::network::native_socket fd,
                                        const void* buffer, std::size_t size);
  /// TLS may hold decrypted bytes that no socket event will announce.
  bool must_read_more(caf::io::network::native_socket, std::size_t);

private:
  SSL* session_;
};

class guarded_scribe : public caf::io::scribe {
public:
  guarded_scribe(caf::io::network::default_multiplexer& mpx, admitted_link link,
                 std::shared_ptr<peer_registry> peers);
  ~guarded_scribe() override;

  void configure_read(caf::io::receive_policy::config config) override;
  void ack_writes(bool enable) override;
  std::vector<char>& wr_buf() override;
  std::vector<char>& rd_buf() override;
  void graceful_shutdown() override;
  void flush() override;
  std::string addr() const override;
  std::uint16_t port() const override;
  void add_to_loop() override;
  void remove_from_loop() override;
  bool consume(caf::execution_unit* ctx, const void* bytes, std::size_t size) override;

private:
  /// Reads BASP's header and, for a handshake, the node that sent it; false to refuse it.
  bool inspect_header(caf::execution_unit* ctx, const void* bytes, std::size_t size);
  void note_node(caf::execution_unit* ctx, const void* bytes, std::size_t size);
  /// Ends the connection: its socket is shut down, so its next read ends it as a peer's close
  /// would, and nothing more reaches BASP.
  void refuse(const std::string& why);

  bool launched_ = false;
  bool refused_ = false;
  bool expect_header_ = true;
  bool payload_is_handshake_ = false;
  peer_identity peer_;
  std::size_t max_message_bytes_;
  caf::node_id node_;
  std::shared_ptr<peer_registry> peers_;
  caf::io::network::stream_impl<link_io> stream_;
};

} // namespace troupe::detail
