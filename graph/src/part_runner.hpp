// Running a partition's parts wherever `start` sends them (a thread pool, a process pool): each
// starts once the parts it needs are done, and reports back through `done`, on any thread.
#pragma once

#include "troupe/graph/partition.hpp"

#include <exception>
#include <functional>

namespace troupe::graph::detail {

using part_done = std::function<void(tensor_map outputs, std::exception_ptr error)>;
/// Starts part `pid` on `inputs` (the values of its input names); calls `done` when it ends.
using part_starter = std::function<void(part_id pid, tensor_map inputs, part_done done)>;

/// Every value of the run, as execute_partition returns it; the first part's error rethrown
/// once the parts running are done (no part starts after it).
tensor_map run_parts(const graph_partition& partition, tensor_map inputs,
                     const part_starter& start);

/// The outputs node of part `pid`: its output names and what computes each.
node_ptr part_outputs(const graph_partition& partition, part_id pid);

} // namespace troupe::graph::detail
