// What a world tells its user, and the membership that holds it: the callbacks given to
// world::on_member_lost, on_member_joined and on_rejoined. A member that joins the world again
// (world_options::rejoin) is a new world_core, and keeps them: every core of one membership
// shares this.
#pragma once

#include "member_callbacks.hpp"

#include <functional>

namespace troupe::detail {

class world_core;

struct world_callbacks {
  member_callbacks lost{"on_member_lost"};
  member_callbacks joined{"on_member_joined"};
  member_callbacks rejoined{"on_rejoined"};
  /// The membership's (set before any core exists, never changed): `core` lost rank 0 without
  /// its leaving, and with it the world. Run on the member actor: it must not block.
  std::function<void(const world_core& core)> cut_off;
};

} // namespace troupe::detail
