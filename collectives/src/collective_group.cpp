#include "troupe/collectives/collective_group.hpp"

#include "collective_core.hpp"

#include "troupe/actors/error.hpp"

namespace troupe {

collective_group::collective_group(std::shared_ptr<detail::collective_core> core)
  : core_(std::move(core)) {}

detail::collective_core& collective_group::core() const {
  if (!core_)
    detail::throw_empty_handle("troupe::collective_group", "an operation");
  return *core_;
}

int collective_group::rank() const { return core().setup.rank; }
int collective_group::size() const { return static_cast<int>(core().setup.world_ranks.size()); }
const std::vector<int>& collective_group::world_ranks() const { return core().setup.world_ranks; }
collective_backend collective_group::backend() const { return core().setup.options.backend; }

int collective_group::run(detail::collective_call call) { return core().run(std::move(call)); }

collective_handle collective_group::start(detail::collective_call call) {
  return core().start(std::move(call));
}

void collective_group::destroy() { core().destroy(); }

} // namespace troupe
