// Who each connected CAF node proved to be in its handshake, so that an actor can tell which
// authenticated peer sent it a message (its sender's node) rather than trust what the message
// says. Filled by the scribes (guarded_scribe), which read the node from BASP's own handshake on
// the connection that carried it. Not installed.
#pragma once

#include "troupe/actors/link_policy.hpp"

#include <caf/node_id.hpp>

#include <map>
#include <mutex>
#include <optional>

namespace troupe::detail {

class peer_registry {
public:
  void add(const caf::node_id& node, const peer_identity& peer);
  /// A connection of `node` closed (it may have had two: one each way).
  void remove(const caf::node_id& node);
  std::optional<peer_identity> find(const caf::node_id& node) const;

private:
  struct entry {
    peer_identity peer;
    int connections = 0;
  };
  mutable std::mutex mutex_;
  std::map<caf::node_id, entry> peers_;
};

} // namespace troupe::detail
