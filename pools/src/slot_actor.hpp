// A pool's slot actor (slot_actor.cpp): runs the leases of one worker slot.
#pragma once

#include "actors.hpp"
#include "process/worker_link.hpp"

#include <cstddef>
#include <memory>

namespace troupe::detail {

/// Starts the actor of slot `slot` (its `generation`-th), which reports each lease done to
/// `dispatcher`. `node`: the worker from another host it serves, if any.
worker_actor spawn_slot_actor(caf::actor_system& system, dispatcher_actor dispatcher,
                              std::size_t slot, std::size_t generation,
                              std::shared_ptr<const worker_setup> setup,
                              std::shared_ptr<worker_link> node);

} // namespace troupe::detail
