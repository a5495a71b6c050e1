// CAF's side of a troupe listener: a doorman (what CAF's BASP broker accepts connections
// through) that watches the listener's signal pipe instead of a listening socket, and hands
// BASP each connection only once its handshake has admitted it, as a guarded_scribe. The
// listening socket itself is the gate's. Not installed.
#pragma once

#include "guarded_scribe.hpp"

#include <caf/io/doorman.hpp>
#include <caf/io/network/acceptor_impl.hpp>

namespace troupe::detail {

/// The acceptor's policy: "accepting" takes one admitted link from the listener.
class handover_policy {
public:
  handover_policy(std::shared_ptr<listener> from, std::optional<admitted_link>* into)
    : from_(std::move(from)), into_(into) {}
  bool try_accept(caf::io::network::native_socket& result, caf::io::network::native_socket fd);

private:
  std::shared_ptr<listener> from_;
  std::optional<admitted_link>* into_;
};

class handover_doorman : public caf::io::doorman {
public:
  handover_doorman(caf::io::network::default_multiplexer& mpx, std::shared_ptr<listener> from,
                   std::shared_ptr<peer_registry> peers);
  ~handover_doorman() override;

  bool new_connection() override;
  void graceful_shutdown() override;
  void launch() override;
  std::string addr() const override;
  std::uint16_t port() const override;
  void add_to_loop() override;
  void remove_from_loop() override;

private:
  handover_doorman(caf::io::network::default_multiplexer& mpx, std::shared_ptr<listener> from,
                   std::shared_ptr<peer_registry> peers, int signal);

  std::shared_ptr<listener> from_;
  std::shared_ptr<peer_registry> peers_;
  std::optional<admitted_link> taken_;
  caf::io::network::acceptor_impl<handover_policy> acceptor_;
};

} // namespace troupe::detail
