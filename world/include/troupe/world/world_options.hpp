// How a process joins a world: its name and rank, the world's size, and where rank 0 listens.
//
//   troupe::world w{rt, {.name = "trainer", .rank = 1, .world_size = 3,
//                        .address = "127.0.0.1:9100"}};
//   troupe::world w{rt, troupe::world_options::from_environment()};   // under mpirun or srun
#pragma once

#include "troupe/actors/tls_options.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace troupe {

/// world_options::rank of a member that joins a formed world at whatever rank is free.
inline constexpr int any_rank = -2;

/// How a member joins a world: its name and rank, the world's size, where rank 0 listens or the
/// store the world keeps its tables in, TLS, a secret, devices, timeouts. from_environment() reads
/// them from TROUPE_* variables, as torchrun and mpirun set them.
struct world_options {
  /// This member's name, unique in the world. Empty: "rank-N".
  std::string name;
  /// This member's rank, unique in the world: from 0 to world_size - 1 for the members that
  /// form it, up to max_world_size - 1 for those that join it once formed; any_rank: the lowest
  /// free rank from world_size up, which rank 0 gives a member that joins the formed world (it
  /// needs a name).
  int rank = -1;
  /// The members the world forms with: the constructors of all of them return together.
  int world_size = -1;
  /// The most members the world may ever have: once formed, it takes members that join it (of
  /// ranks world_size and up) until then. -1: world_size (no member joins later). Every member
  /// must have the same. Environment: TROUPE_MAX_WORLD_SIZE.
  int max_world_size = -1;
  /// "host:port" where rank 0 listens and every other member reaches it (not used with a store).
  std::string address = "127.0.0.1:9100";
  /// Where the world keeps its tables. Empty: rank 0 keeps them (nothing to install; the world
  /// is rank 0's and ends with it). "etcd://host:port,host:port/name": an etcd cluster (3.4, v3
  /// API; three or five servers) keeps who the members are, each under a lease it renews (lost
  /// for everyone at once when it goes: a member's loss takes at most the 3 s TTL), the keys and
  /// who holds them, and the coordinator role, under the world's `name` ("troupe" if none), so
  /// the world outlives any member, rank 0 included. Calls still go member to member. With TLS,
  /// members reach etcd with the world's certificate, key and CA. Members listen on loopback
  /// when the store's servers are on loopback, else on every interface (TLS or
  /// allow_insecure), reached at the address their route to the store leaves from. Every
  /// member must name the same. Environment: TROUPE_STORE.
  std::string store;
  /// Without TLS, members listen on loopback only (unless allow_insecure).
  std::optional<tls_options> tls;
  /// Lets members listen beyond loopback without TLS; logged, since without TLS nothing is
  /// encrypted, and without a secret anyone on that network can then call any task.
  bool allow_insecure = false;
  /// The world's secret: every connection between members proves it (an HMAC of a fresh nonce,
  /// both ways) before a byte of CAF's protocol is read, and the secret never crosses the
  /// network. Every member must have the same one. Empty: nothing is proven, and a world
  /// without TLS trusts every process that can reach its ports (on loopback, every local
  /// process). Environment: TROUPE_SECRET.
  std::string secret;
  /// The largest message a member takes from another, in bytes (a call's arguments or answer
  /// over TCP, with its framing); a connection that announces more is closed. Every member
  /// should have the same limit.
  std::size_t max_message_bytes = std::size_t{1} << 30;
  /// A member cut off from the world (it lost rank 0: a link down past the 3 s loss bound, rank
  /// 0's host rebooted) joins it again by itself, under its name and rank, as soon as rank 0
  /// can be reached, trying every second or so until it is taken in or stopped: a new
  /// incarnation of it, which the others take as a member that joined again. What belonged to
  /// the old one failed with peer_lost and stays gone; its groups throw state_error (create
  /// them again, in world::on_rejoined). false: a member cut off stays out, and every call it
  /// makes fails with peer_lost. Environment: TROUPE_REJOIN (1 or 0).
  bool rejoin = false;
  /// How long the constructor waits for the whole world to join.
  std::chrono::milliseconds timeout{60'000};
  /// How long stop() and the destructor wait for calls this member is still running for
  /// others (whose callers have been told it stopped); then they return, and those calls
  /// finish on their own threads with their answers dropped.
  std::chrono::milliseconds stop_grace{1'000};
  /// Threads that run calls other members make on this one (one more with shared_memory: at
  /// any time one of them waits on this member's inbox).
  int rpc_threads = 4;
  /// Members on one host call each other through shared-memory inboxes; false: always TCP
  /// (for a /dev/shm too small to hold them, say).
  bool shared_memory = true;
  /// A world all on one host (rank 0's address, or the store's, on loopback) meets its groups'
  /// barriers in shared memory: each member counts itself in one object, and the last wakes the
  /// rest (members that do not share /dev/shm find so as the group is made, and use the tree).
  /// false: along a tree of the members' connections, as a world across hosts does. Every
  /// member must have the same setting: a group whose members differ never meets. Environment:
  /// TROUPE_HOST_BARRIERS (1 or 0).
  bool host_barriers = true;
  /// The devices this member offers for actors placed by device (rpc_group::spawn with
  /// troupe::on_device), named as troupe::local_devices() names them: "cuda:0", "cpu". Every
  /// member learns every member's list when the world forms; the group names each as
  /// "device@member" (rpc_group::devices()). Empty: {"cpu"}. Members on one host should share
  /// its GPUs out, one list each. Environment: TROUPE_DEVICES, comma-separated.
  std::vector<std::string> devices;

  /// Reads TROUPE_NAME, TROUPE_RANK, TROUPE_WORLD_SIZE, TROUPE_MAX_WORLD_SIZE, TROUPE_ADDRESS,
  /// TROUPE_STORE, TROUPE_SECRET, TROUPE_REJOIN, TROUPE_HOST_BARRIERS and TROUPE_DEVICES, and TLS
  /// from TROUPE_TLS_CERT, TROUPE_TLS_KEY and TROUPE_TLS_CA (TROUPE_TLS_PASSPHRASE) as a pool's
  /// nodes do (TROUPE_RANK=any: any_rank); the rank and size fall back to what launchers set
  /// (OMPI_COMM_WORLD_RANK/_SIZE, PMI_RANK/_SIZE, SLURM_PROCID/SLURM_NTASKS). Throws
  /// invalid_argument naming a variable that is malformed, or saying which are missing.
  static world_options from_environment();
};

} // namespace troupe
