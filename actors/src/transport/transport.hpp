// troupe's network transport under CAF's BASP broker, one per runtime: listeners whose
// connections pass troupe's handshake on the gate's threads before BASP reads a byte, outgoing
// connections that make the same handshake before BASP writes one, and scribes that bound what
// a connection may carry afterwards. CAF's own TCP and OpenSSL transports are not used: the
// OpenSSL one reads other connections' errors as its own (OpenSSL's per-thread error queue is
// never cleared), so one connection's end ended every other. Not installed.
#pragma once

#include "gate.hpp"
#include "peer_registry.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/io/middleman_actor.hpp>

#include <atomic>
#include <map>
#include <mutex>

namespace troupe::detail {

/// What the transport actor needs to make an outgoing connection to one endpoint.
struct connect_intent {
  link_policy policy;
  std::shared_ptr<const tls_context> tls;
  std::chrono::steady_clock::time_point deadline;
};

class transport {
public:
  transport(caf::actor_system& system, handshake_limits limits);
  ~transport();
  transport(const transport&) = delete;
  transport& operator=(const transport&) = delete;

  /// The middleman actor that publishes and connects through this transport.
  const caf::io::middleman_actor& actor() const noexcept { return actor_; }

  /// Listens on host:port for `whom` under `policy`; returns the port. Throws network_error.
  std::uint16_t publish(const caf::actor& whom, const std::string& host, std::uint16_t port,
                        link_policy policy, std::shared_ptr<const tls_context> tls);

  /// Says how the next connection to host:port is to be made (kept until replaced).
  void intend(const std::string& host, std::uint16_t port, connect_intent intent);

  // For the transport actor.
  std::shared_ptr<listener> take_prepared(std::uint16_t port);
  std::optional<connect_intent> intent_for(const std::string& host, std::uint16_t port) const;
  const handshake_limits& limits() const noexcept { return limits_; }
  const std::shared_ptr<peer_registry>& peers() const noexcept { return peers_; }
  /// Set once the transport is ending: a connection made then is not handed to CAF. Shared, so
  /// that the actor may read it even if it outlives the transport (its end was not awaited).
  std::shared_ptr<const std::atomic<bool>> stopping() const noexcept { return stopping_; }

private:
  caf::actor_system& system_;
  const handshake_limits limits_;
  std::shared_ptr<peer_registry> peers_ = std::make_shared<peer_registry>();
  gate gate_;
  std::mutex publish_mutex_; // one publish at a time: its listener waits in prepared_
  mutable std::mutex mutex_;
  std::map<std::uint16_t, std::shared_ptr<listener>> prepared_;
  std::map<std::pair<std::string, std::uint16_t>, connect_intent> intents_;
  std::shared_ptr<std::atomic<bool>> stopping_ = std::make_shared<std::atomic<bool>>(false);
  caf::io::middleman_actor actor_;
};

/// The transport's middleman actor (transport_actor.cpp).
caf::io::middleman_actor spawn_transport_actor(caf::actor_system& system, transport& owner);

} // namespace troupe::detail
