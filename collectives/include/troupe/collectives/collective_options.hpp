// How a collective group moves tensors: on which engine, and how long an
// operation may take.
//
//   auto group = troupe::create_collective_group(world, {0, 1, 2},
//                                                {.backend = troupe::collective_backend::mpi});
//
// gloo (the default, the engine behind torch.distributed) joins processes by address, as a world
// does, and survives a dead member: the others fail with peer_lost or timeout_error. MPI needs
// the processes started by mpirun or srun (the world's ranks are MPI's) and is the fastest on
// one host (shared memory), but MPI aborts the whole job when a rank dies, and when an operation
// outlasts `timeout` (MPI cannot cancel a collective). Each engine is in a build of troupe when
// it was found (or asked for) at its configure: TROUPE_WITH_GLOO, TROUPE_WITH_MPI.
#pragma once

#include <chrono>
#include <string>

namespace troupe {

enum class collective_backend { gloo, mpi };

/// How all_reduce and reduce combine the members' values (bool: sum and max are
/// "or", product and min are "and").
enum class reduce_op { sum, product, min, max };

/// How a collective group is made: its engine, its timeout, and whether shapes are checked.
struct collective_options {
  /// gloo (the default) or MPI (a world started under mpirun).
  collective_backend backend = collective_backend::gloo;
  /// How long the group's creation, and each operation, may take.
  std::chrono::milliseconds timeout{30'000};
  /// Before each collective the members compare their operation, element type
  /// and shape (one small all_gather), so that a mismatch throws
  /// invalid_argument naming both sides on every member instead of corrupting
  /// data or waiting out the timeout. Turn it off only for small tensors in hot
  /// loops whose shapes are known to agree.
  bool check_shapes = true;
  /// gloo: where the other members reach this member's transport, as an
  /// interface name ("eth0", as GLOO_SOCKET_IFNAME takes) or an address of this
  /// host. Empty: TROUPE_SOCKET_IFNAME if set, else the world's own host when the
  /// world is on loopback, else the address this member's connection to rank 0
  /// leaves from (rank 0: the one it is reached at), never the host name, which
  /// often resolves to a loopback address.
  std::string interface;
};

} // namespace troupe
