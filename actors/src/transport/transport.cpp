#include "transport.hpp"

#include "troupe/actors/error.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

namespace troupe::detail {

transport::transport(caf::actor_system& system, handshake_limits limits)
  : system_(system), limits_(limits), gate_(limits), actor_(spawn_transport_actor(system, *this)) {}

// The actor ends before the transport does, and before the actor system stops the middleman.
// Killed, not asked: CAF's middleman actor, which this one is, ignores every other exit message,
// and lived on. Waited for: a connect it had in progress when the runtime stopped handed its
// connection to the BASP broker while the middleman was stopping, and that request, never
// drained, held this actor, whose thread the actor system then waited for forever. A connect
// that ends now hands nothing to CAF (transport_actor.cpp); it ends by its handshake's deadline.
transport::~transport() {
  *stopping_ = true;
  caf::scoped_actor self{system_};
  self->monitor(actor_);
  caf::anon_send_exit(actor_, caf::exit_reason::kill);
  self->receive([](const caf::down_msg&) {},
                caf::after(limits_.timeout + std::chrono::seconds{1}) >> [] {});
}

std::uint16_t transport::publish(const caf::actor& whom, const std::string& host,
                                 std::uint16_t port, link_policy policy,
                                 std::shared_ptr<const tls_context> tls) {
  std::lock_guard one_at_a_time{publish_mutex_};
  auto l = std::make_shared<listener>(host, port, std::move(policy), std::move(tls));
  const auto bound = l->port();
  {
    std::lock_guard guard{mutex_};
    prepared_[bound] = l;
  }
  // The gate watches the listener before the actor is asked to publish it: the actor may be
  // in an outgoing handshake with this very listener (a process reaching itself, a connect
  // racing a publish). Links admitted meanwhile wait in the listener for the doorman.
  gate_.add(l);
  caf::scoped_actor self{system_};
  caf::error failure;
  self
    ->request(actor_, caf::infinite, caf::publish_atom::value, bound,
              caf::actor_cast<caf::strong_actor_ptr>(whom), std::set<std::string>{}, host, true)
    .receive([](std::uint16_t) {}, [&](caf::error& e) { failure = std::move(e); });
  {
    std::lock_guard guard{mutex_};
    prepared_.erase(bound);
  }
  if (failure) {
    l->close();
    throw network_error("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                        system_.render(failure));
  }
  return bound;
}

void transport::intend(const std::string& host, std::uint16_t port, connect_intent intent) {
  std::lock_guard guard{mutex_};
  intents_[{host, port}] = std::move(intent);
}

std::shared_ptr<listener> transport::take_prepared(std::uint16_t port) {
  std::lock_guard guard{mutex_};
  auto at = prepared_.find(port);
  return at == prepared_.end() ? nullptr : at->second;
}

std::optional<connect_intent> transport::intent_for(const std::string& host,
                                                    std::uint16_t port) const {
  std::lock_guard guard{mutex_};
  auto at = intents_.find({host, port});
  if (at == intents_.end())
    return std::nullopt;
  return at->second;
}

} // namespace troupe::detail
