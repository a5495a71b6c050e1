// What troupe's modules over world (collective groups) reach of a world: its core, which the
// public class keeps to itself.
#pragma once

#include "world_core.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/world/world.hpp"

#include <memory>

namespace troupe::detail {

struct world_access {
  /// The world's core; state_error once the world has stopped.
  static const std::shared_ptr<world_core>& core(world& members) {
    if (!members.core_)
      throw state_error("the world has stopped");
    return members.core_;
  }
};

} // namespace troupe::detail
