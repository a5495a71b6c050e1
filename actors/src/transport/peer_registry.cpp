#include "peer_registry.hpp"

namespace troupe::detail {

void peer_registry::add(const caf::node_id& node, const peer_identity& peer) {
  std::lock_guard guard{mutex_};
  auto& e = peers_[node];
  e.peer = peer;
  ++e.connections;
}

void peer_registry::remove(const caf::node_id& node) {
  std::lock_guard guard{mutex_};
  auto at = peers_.find(node);
  if (at != peers_.end() && --at->second.connections <= 0)
    peers_.erase(at);
}

std::optional<peer_identity> peer_registry::find(const caf::node_id& node) const {
  std::lock_guard guard{mutex_};
  auto at = peers_.find(node);
  if (at == peers_.end())
    return std::nullopt;
  return at->second.peer;
}

} // namespace troupe::detail
