#include "handover_doorman.hpp"

#include <unistd.h>

namespace troupe::detail {

namespace network = caf::io::network;

bool handover_policy::try_accept(network::native_socket& result, network::native_socket fd) {
  char signal = 0;
  (void)::read(fd, &signal, 1);
  *into_ = from_->take();
  result = *into_ ? (*into_)->fd : network::invalid_native_socket;
  return true;
}

handover_doorman::handover_doorman(network::default_multiplexer& mpx,
                                   std::shared_ptr<listener> from,
                                   std::shared_ptr<peer_registry> peers)
  : handover_doorman(mpx, from, std::move(peers), from->take_signal()) {}

// The pipe is the acceptor's descriptor, so it names the doorman as a listening socket names
// CAF's own: unique while the doorman lives.
handover_doorman::handover_doorman(network::default_multiplexer& mpx,
                                   std::shared_ptr<listener> from,
                                   std::shared_ptr<peer_registry> peers, int signal)
  : caf::io::doorman(network::accept_hdl_from_socket(signal)), from_(from),
    peers_(std::move(peers)), acceptor_(mpx, signal, from, &taken_) {}

handover_doorman::~handover_doorman() { from_->close(); }

bool handover_doorman::new_connection() {
  auto link = std::exchange(taken_, std::nullopt);
  if (detached() || !link)
    return false; // a link taken after BASP let go of this doorman closes here
  auto& mpx = acceptor_.backend();
  auto scribe = caf::make_counted<guarded_scribe>(mpx, std::move(*link), peers_);
  auto handle = scribe->hdl();
  parent()->add_scribe(std::move(scribe));
  return caf::io::doorman::new_connection(&mpx, handle);
}

void handover_doorman::graceful_shutdown() {
  from_->close();
  acceptor_.graceful_shutdown();
  detach(&acceptor_.backend(), false);
}

void handover_doorman::launch() { acceptor_.start(this); }
std::string handover_doorman::addr() const { return from_->host(); }
std::uint16_t handover_doorman::port() const { return from_->port(); }
void handover_doorman::add_to_loop() { acceptor_.activate(this); }
void handover_doorman::remove_from_loop() { acceptor_.passivate(); }

} // namespace troupe::detail
