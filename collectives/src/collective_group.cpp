#include "troupe/collectives/collective_group.hpp"

#include "collective_core.hpp"

namespace troupe {

collective_group::collective_group(std::shared_ptr<detail::collective_core> core)
  : core_(std::move(core)) {}

int collective_group::rank() const { return core_->setup.rank; }
int collective_group::size() const { return static_cast<int>(core_->setup.world_ranks.size()); }
const std::vector<int>& collective_group::world_ranks() const { return core_->setup.world_ranks; }
collective_backend collective_group::backend() const { return core_->setup.options.backend; }

int collective_group::run(detail::collective_call call) { return core_->run(std::move(call)); }

collective_handle collective_group::start(detail::collective_call call) {
  return core_->start(std::move(call));
}

void collective_group::destroy() { core_->destroy(); }

} // namespace troupe
