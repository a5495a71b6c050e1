// create_collective_group: which members of a world a collective group has, and its engine.
#include "troupe/collectives/collective_group.hpp"

#include "collective_core.hpp"
#include "world_access.hpp"

#include "troupe/actors/error.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace troupe {

namespace {

std::vector<int> checked_ranks(std::vector<int> ranks, const detail::world_core& core) {
  if (ranks.empty())
    throw invalid_argument("create_collective_group: no ranks");
  std::sort(ranks.begin(), ranks.end());
  if (std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end())
    throw invalid_argument("create_collective_group: rank " +
                           std::to_string(*std::adjacent_find(ranks.begin(), ranks.end())) +
                           " is listed twice");
  for (const int rank : ranks)
    if (core.members.name(rank) == nullptr)
      throw invalid_argument("create_collective_group: rank " + std::to_string(rank) +
                             " is not in the world (no member holds it; ranks 0 to " +
                             std::to_string(core.options.max_world_size - 1) + " may be)");
  return ranks;
}

/// A short name for a set of ranks, the same in every process (FNV-1a over them): rendezvous
/// names stay small however many ranks a group has.
std::string name_of(const std::vector<int>& ranks) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const int rank : ranks)
    for (int byte = 0; byte < 4; ++byte) {
      hash ^= static_cast<std::uint64_t>((static_cast<std::uint32_t>(rank) >> (8 * byte)) & 0xff);
      hash *= 1099511628211ull;
    }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

} // namespace

std::optional<collective_group> create_collective_group(world& members, std::vector<int> ranks,
                                                        collective_options options) {
  const auto& core = detail::world_access::core(members);
  if (!collective_backend_available(options.backend))
    throw invalid_argument(std::string{"create_collective_group: this build of troupe has no "} +
                           (options.backend == collective_backend::mpi ? "MPI" : "gloo") +
                           " engine (configure it with TROUPE_WITH_" +
                           (options.backend == collective_backend::mpi ? "MPI" : "GLOO") + "=ON)");
  if (options.timeout <= std::chrono::milliseconds::zero())
    throw invalid_argument("create_collective_group: the timeout must be positive");
  detail::engine_setup setup;
  setup.world_ranks = checked_ranks(std::move(ranks), *core);
  // Every member counts the groups of each set of ranks, so the n-th group of a set has one
  // name on all of them (collective_numbers.hpp).
  const int number = core->collective_groups.next(setup.world_ranks);
  setup.group = "collective group " + std::to_string(number) + " of ranks " +
                std::to_string(setup.world_ranks.front()) + ".." +
                std::to_string(setup.world_ranks.back());
  setup.rendezvous =
    "troupe.collective." + name_of(setup.world_ranks) + "." + std::to_string(number);
  setup.options = std::move(options);
  const auto at = std::find(setup.world_ranks.begin(), setup.world_ranks.end(), members.rank());
  const bool member = at != setup.world_ranks.end();
  setup.rank = member ? static_cast<int>(at - setup.world_ranks.begin()) : -1;

  std::unique_ptr<detail::collective_engine> engine;
#if TROUPE_HAVE_MPI
  if (setup.options.backend == collective_backend::mpi)
    engine = detail::make_mpi_engine(core, setup, member); // every member splits MPI's world
#endif
#if TROUPE_HAVE_GLOO
  if (setup.options.backend == collective_backend::gloo && member)
    engine = detail::make_gloo_engine(core, setup);
#endif
  if (!member)
    return std::nullopt;
  return collective_group{std::make_shared<detail::collective_core>(std::move(engine), setup)};
}

bool collective_backend_available(collective_backend backend) noexcept {
  switch (backend) {
  case collective_backend::gloo: return TROUPE_HAVE_GLOO != 0;
  case collective_backend::mpi: return TROUPE_HAVE_MPI != 0;
  }
  return false;
}

} // namespace troupe
