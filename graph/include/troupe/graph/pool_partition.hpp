// Running a partition's parts on troupe's pools (the troupe::graph_pools component).
//
//   auto p = troupe::graph::find_partition(outputs, part_of);
//   auto values = troupe::graph::execute_partition(p, inputs, pool);    // a thread pool, or
//                                                                        // a process pool
#pragma once

#include "troupe/graph/partition.hpp"
#include "troupe/pools/pools_fwd.hpp"

namespace troupe::graph {

/// Runs the parts as execute_partition(partition, inputs) does, with parts on `pool`: each starts
/// as soon as the parts it needs are done, so independent parts run at once. At most one task per
/// worker takes ready parts one after another (a chain of parts runs on one worker; 16 independent
/// parts on 2 workers cost the pool 2 tasks, not 16). The first part that throws stops the rest
/// from starting; its exception is rethrown once those running are done, as is troupe::pool_closed
/// if the pool is terminated.
tensor_map execute_partition(const graph_partition& partition, tensor_map inputs,
                             thread_pool& pool);
/// The same on worker processes: each part travels as its DAG and inputs (troupe::serialize)
/// and runs on a worker, so the program must be the pool's worker program (see process_pool).
tensor_map execute_partition(const graph_partition& partition, tensor_map inputs,
                             process_pool& pool);

} // namespace troupe::graph
