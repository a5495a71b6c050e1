// How a process joins a world: its name and rank, the world's size, and where rank 0 listens.
//
//   troupe::world w{rt, {.name = "trainer", .rank = 1, .world_size = 3,
//                        .address = "127.0.0.1:9100"}};
//   troupe::world w{rt, troupe::world_options::from_environment()};   // under mpirun or srun
#pragma once

#include "troupe/actors/tls_options.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace troupe {

struct world_options {
  /// This member's name, unique in the world. Empty: "rank-N".
  std::string name;
  /// This member's rank, from 0 to world_size - 1, unique in the world.
  int rank = -1;
  int world_size = -1;
  /// "host:port" where rank 0 listens and every other member reaches it.
  std::string address = "127.0.0.1:9100";
  /// Without TLS, members listen on loopback only (unless allow_insecure).
  std::optional<tls_options> tls;
  /// Lets members listen beyond loopback without TLS; logged, since anyone on that network can
  /// then call any task.
  bool allow_insecure = false;
  /// How long the constructor waits for the whole world to join.
  std::chrono::milliseconds timeout{60'000};
  /// Threads that run calls other members make on this one (one more with shared_memory: at
  /// any time one of them waits on this member's inbox).
  int rpc_threads = 4;
  /// Members on one host call each other through shared-memory inboxes; false: always TCP
  /// (for a /dev/shm too small to hold them, say).
  bool shared_memory = true;

  /// Reads TROUPE_NAME, TROUPE_RANK, TROUPE_WORLD_SIZE and TROUPE_ADDRESS; the rank and size
  /// fall back to what launchers set (OMPI_COMM_WORLD_RANK/_SIZE, PMI_RANK/_SIZE,
  /// SLURM_PROCID/SLURM_NTASKS). Throws invalid_argument naming a variable that is malformed,
  /// or saying which are missing.
  static world_options from_environment();
};

} // namespace troupe
