// machin's collective group tests (test_cc_*) and troupe's own, run by every
// member of a world of 3 on one backend. A failed check throws (the member's
// role, or MPI rank, then exits non-zero with the message).
#pragma once

#include "troupe/collectives/collective_group.hpp"
#include "troupe/world/world.hpp"

namespace troupe::testing {

/// Every case below, in order; all three members call it.
void run_collective_cases(troupe::world& world, const troupe::collective_options& options);

} // namespace troupe::testing
