// What troupe's modules over world (collective groups) reach of a world: its core, which the
// public class keeps to itself.
#pragma once

#include "world_membership.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/world/world.hpp"

#include <memory>

namespace troupe::detail {

struct world_access {
  /// The world's core now (world_options::rejoin may replace it); state_error once the world
  /// has stopped.
  static std::shared_ptr<world_core> core(world& members) {
    if (!members.membership_)
      throw state_error("the world has stopped");
    return members.membership_->core();
  }
};

} // namespace troupe::detail
