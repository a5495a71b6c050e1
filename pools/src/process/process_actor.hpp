// An actor in another process (process_pool::spawn): a worker process of its own, or the worker
// process of a pool's slot (troupe::in_slot), where a thread of its own serves it. The object
// lives there, made from its constructor's arguments as that process's (or thread's) context;
// its calls go there one at a time through queues of its own; and when the process dies, troupe
// makes it again (in a new process, or the slot's next one) as the actor's restart_policy allows.
#pragma once

#include "process/slot_placements.hpp"
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

/// A slot of a process pool, as an actor placed there needs it.
struct slot_of_pool {
  std::size_t slot = 0;
  std::shared_ptr<const process_settings> settings; // the pool's: timeouts, message bound
  std::shared_ptr<slot_placements> placements;
};

/// Places an actor of registered type `type`, made from `constructor`, in the worker process of
/// slot `where.slot`, served there by a thread of its own.
std::shared_ptr<actor_core> spawn_actor_in_slot(runtime& rt, slot_of_pool where,
                                                actor_options options, std::string type,
                                                std::vector<std::byte> constructor);

} // namespace troupe::detail
