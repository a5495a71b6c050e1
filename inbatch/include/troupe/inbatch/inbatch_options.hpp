// How an inbatch_parallel action runs (troupe/inbatch/inbatch_parallel.hpp): where, on how many
// workers at most, and the decorator-level named arguments that reach only init and post.
#pragma once

#include "troupe/inbatch/named_args.hpp"
#include "troupe/pools/pools_fwd.hpp"

#include <cstddef>
#include <optional>
#include <string_view>

namespace troupe {

/// Where the items run (batchflow's 'threads', 'mpc', 'async', 'for').
enum class inbatch_target {
  threads, // on a thread pool, sharing the caller's batch
  processes, // on a process pool: the method is a registered task, the batch travels as a copy
  async, // the method starts the work itself and returns an async_result or std::future
  sequential // one after the other on the calling thread
};

/// The target called `name`: threads/t, processes/mpc/m, async/a, sequential/for/f. Throws
/// troupe::invalid_argument naming an unknown one.
inbatch_target inbatch_target_named(std::string_view name);

/// 4 x the CPUs this process may run on (batchflow's default n_workers).
std::size_t default_inbatch_workers();

/// How an inbatch_parallel action runs (batchflow's decorator arguments).
struct inbatch_options {
  /// Threads, processes, or sequential on the calling thread.
  inbatch_target target = inbatch_target::threads;
  /// At most this many items run at once (at least 1). Default: default_inbatch_workers(). The
  /// pool the action makes for itself has this many threads (processes: no more than the CPUs).
  std::optional<std::size_t> n_workers;
  /// Only with inbatch_target::sequential: the first exception propagates at once and the items
  /// after it never run (anything else is an invalid_argument when the action is made).
  bool debug = false;
  /// Processes target: items per message to a worker (a worker that dies fails the items of
  /// its message; a method taking the batch by non-const reference gets a copy per message).
  /// At least 1. Default: 4 messages per worker running at once.
  std::optional<std::size_t> chunksize;
  /// Decorator-level named arguments: given to init and post (under the call's own, which win),
  /// never to the method.
  named_args extras;
  /// Pools to run on; null: a pool the action makes on first use and keeps for later calls.
  thread_pool* threads = nullptr;
  /// The process pool to run on (processes target); null: one the action makes.
  process_pool* processes = nullptr;
};

/// One call's overrides (batchflow's target=, debug=, n_workers= and keyword arguments).
struct inbatch_call {
  /// The target for this call.
  std::optional<inbatch_target> target;
  /// debug for this call.
  std::optional<bool> debug;
  /// n_workers for this call.
  std::optional<std::size_t> n_workers;
  /// Named arguments of the call: laid over each item's own for the method, and over the
  /// decorator's extras for init and post.
  named_args named;
};

} // namespace troupe
