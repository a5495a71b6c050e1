// Slices on a thread pool.
#include "troupe/pools/thread_pool.hpp"
#include "troupe/staged/parallel_compute.hpp"

#include "stage_runner.hpp"

namespace troupe::staged {

compute_plan parallel_compute(record& r, const std::vector<std::string>& properties,
                              const compute_options& options, thread_pool& pool) {
  const auto definition = r.definition_ptr();
  return detail::run_stages(r, properties, options, [&](detail::slice_job job) {
    return pool.apply_async(
      [definition, job = std::move(job)] { return detail::run_slice(definition, job); });
  });
}

} // namespace troupe::staged
