// An actor in a worker process of its own (process_pool::spawn): the object lives there, made
// from its constructor's arguments as that process's context; its calls go there one at a time
// through the process's queues; and when the process dies, troupe starts another as the actor's
// restart_policy allows.
#pragma once

#include "process/worker_link.hpp"

#include "troupe/actors/actor.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace troupe::detail {

/// Starts the process of an actor of registered type `type` (its context type key), made from
/// `constructor` (its arguments encoded), watched with the pool's `settings`.
std::shared_ptr<actor_core> spawn_process_actor(runtime& rt,
                                                std::shared_ptr<const process_settings> settings,
                                                actor_options options, std::string type,
                                                std::vector<std::byte> constructor);

} // namespace troupe::detail
