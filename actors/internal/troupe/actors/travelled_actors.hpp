// Actors outside a world whose handles travelled to the worker processes of this process's
// pools (actor<T>::save numbers them, travelled_address in actor.hpp): the calls those processes
// relay back (pools/src/process/relay_host.cpp) find them here by number.
#pragma once

#include "troupe/actors/actor.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace troupe::detail {

struct travelled_actor {
  std::shared_ptr<actor_core> core; // null once every handle here has gone
  std::string type; // its registered type's key
};

/// The actor numbered `number` in this process.
travelled_actor find_travelled(std::uint64_t number);

/// Whether a handle to an actor of this process ever travelled: only then may a worker process
/// relay calls at any time, and pools look for them between their work too.
bool any_travelled() noexcept;

/// The core for an address with `process` set (resolve_actor): the actor itself in its own
/// process, a relay in a worker process of that process's pools; serialization_error elsewhere.
std::shared_ptr<actor_core> resolve_travelled(const actor_address& address);

} // namespace troupe::detail
