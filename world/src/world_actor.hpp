// How handles that arrive in this process (as task arguments or results) reach their actors
// through this process's world.
#pragma once

#include <memory>

namespace troupe::detail {

class world_core;

/// From now on, handles decoded in this process reach their actors through `core`'s world.
void install_actor_resolver(const std::shared_ptr<world_core>& core);
/// `core` has left its world: handles that arrive no longer resolve (unless another core has
/// been installed since).
void remove_actor_resolver(const world_core& core) noexcept;

} // namespace troupe::detail
