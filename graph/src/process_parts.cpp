// Parts on a process pool: each travels to a worker as its outputs' DAG and input values
// (troupe::serialize), runs there with the reference evaluator, and its values come back.
#include "troupe/actors/tensor_serialization.hpp"
#include "troupe/graph/pool_partition.hpp"
#include "troupe/graph/serialization.hpp"
#include "troupe/pools/process_pool.hpp"

#include "part_runner.hpp"

namespace troupe::graph {

namespace {

/// One part as it travels.
struct part_job {
  node_ptr outputs;
  tensor_map inputs;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(outputs, inputs);
  }
};

} // namespace

// Registered where this file is linked: in the program that calls execute_partition with a
// process pool, which is the program its workers run.
TROUPE_TASK(troupe_graph_run_part, [](part_job job) { return evaluate(job.outputs, job.inputs); });

tensor_map execute_partition(const graph_partition& partition, tensor_map inputs,
                             process_pool& pool) {
  return detail::run_parts(
    partition, std::move(inputs), [&](part_id pid, tensor_map part_inputs, detail::part_done done) {
      auto result =
        pool.apply_async(troupe_graph_run_part,
                         part_job{detail::part_outputs(partition, pid), std::move(part_inputs)});
      result.on_error([done](std::exception_ptr error) { done({}, std::move(error)); });
      result.on_result([done](const tensor_map& values) { done(values, nullptr); });
    });
}

} // namespace troupe::graph
