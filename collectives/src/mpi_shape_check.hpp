// The MPI engine's shape check: one MPI_Allreduce of a block of fixed size whose op (troupe's)
// marks the block when any two members' signatures differ. An all_reduce of at most 1 KiB rides
// in the same block and is reduced by the same op, so that a small all_reduce costs one MPI
// call, not two (a separate check made a 1 KiB all_reduce twice as slow as raw MPI's). Every
// member sends the same block size whatever it calls: members that disagree still meet in the
// one MPI_Allreduce, and learn it there.
#pragma once

#include "collective_engine.hpp"

#include <mpi.h>

namespace troupe::detail {

/// Runs the check (and the small all_reduce, `reduce`, when there is one and it fits) on
/// `comm`. MPI must be initialized.
check_outcome mpi_shape_check(MPI_Comm comm, const void* mine, std::size_t bytes,
                              const tensor_view* reduce, reduce_op op);

} // namespace troupe::detail
