// An actor in this process whose object was made from bytes (a world member hosting an actor
// another member spawned): the modules above actors/ start one on a runtime's state. Not
// installed.
#pragma once

#include "troupe/actors/actor.hpp"
#include "troupe/actors/runtime_state.hpp"

#include <memory>

namespace troupe::detail {

/// Starts an actor that owns `object` (a registered actor type's, as its context decoder made
/// it) on `rt`'s actor system.
std::shared_ptr<actor_core> start_local_actor(runtime_state& rt, const actor_options& options,
                                              std::shared_ptr<void> object);

} // namespace troupe::detail
