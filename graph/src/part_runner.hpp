// Running a partition's parts wherever they are sent (a thread pool, a process pool): each starts
// once the parts it needs are done.
#pragma once

#include "troupe/graph/partition.hpp"

#include <exception>
#include <functional>
#include <map>
#include <vector>

namespace troupe::graph::detail {

/// How many parts each part waits for, and the parts waiting for each: what both the ordering
/// and the running of parts count down.
struct part_waits {
  std::map<part_id, std::size_t> waiting;
  std::map<part_id, std::vector<part_id>> needed_by;
};
part_waits waits_of(const std::map<part_id, graph_part>& parts);

using part_done = std::function<void(tensor_map outputs, std::exception_ptr error)>;
/// Starts part `pid` on `inputs` (the values of its input names); calls `done` when it ends.
using part_starter = std::function<void(part_id pid, tensor_map inputs, part_done done)>;

/// Every value of the run, as execute_partition returns it, each part started by `start` (for
/// parts that run elsewhere: a process pool). The first part's error is rethrown once the parts
/// running are done (no part starts after it).
tensor_map run_parts(const graph_partition& partition, tensor_map inputs,
                     const part_starter& start);

/// Runs `loop` on some thread, or throws; `lost(error)` if the loop will never run after all.
using loop_launcher =
  std::function<void(std::function<void()> loop, std::function<void(std::exception_ptr)> lost)>;

/// The same on threads of this process: up to `max_loops` loops, each launched by `launch`,
/// take ready parts one after another and evaluate them, and end when none is ready. A chain of
/// parts then runs on one thread, and independent parts cost one launch per thread, not one
/// per part. If `caller_helps`, the calling thread runs one of the loops itself rather than
/// wait: a caller that is a task of the pool the loops go to would otherwise wait for loops
/// queued behind it (for ever, with one worker).
tensor_map run_parts_in_loops(const graph_partition& partition, tensor_map inputs,
                              std::size_t max_loops, bool caller_helps,
                              const loop_launcher& launch);

/// The outputs node of part `pid`: its output names and what computes each.
node_ptr part_outputs(const graph_partition& partition, part_id pid);

} // namespace troupe::graph::detail
