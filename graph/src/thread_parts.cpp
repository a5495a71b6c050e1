// Parts on a thread pool: a few loops, each taking ready parts one after another.
#include "troupe/graph/pool_partition.hpp"
#include "troupe/pools/this_worker.hpp"
#include "troupe/pools/thread_pool.hpp"

#include "part_runner.hpp"

namespace troupe::graph {

tensor_map execute_partition(const graph_partition& partition, tensor_map inputs,
                             thread_pool& pool) {
  // Inside a pool's task, this thread would only wait: it runs parts too.
  const bool caller_helps = this_worker().has_value();
  return detail::run_parts_in_loops(
    partition, std::move(inputs), pool.size(), caller_helps,
    [&pool](std::function<void()> loop, std::function<void(std::exception_ptr)> lost) {
      pool.apply_async(std::move(loop)).on_error(std::move(lost));
    });
}

} // namespace troupe::graph
