// Slices on worker processes: each travels as a slice_job (troupe::serialize) and finds its
// schema by name there.
#include "troupe/actors/tensor_serialization.hpp"
#include "troupe/pools/process_pool.hpp"
#include "troupe/staged/parallel_compute.hpp"

#include "stage_runner.hpp"

#include <cereal/types/map.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

// Registered where this file is linked: in the program that calls parallel_compute with a
// process pool, which is the program its workers run.
TROUPE_TASK(troupe_staged_run_slice, [](troupe::staged::detail::slice_job job) {
  return troupe::staged::detail::run_slice(troupe::staged::find_schema(job.schema), job);
});

namespace troupe::staged {

compute_plan parallel_compute(record& r, const std::vector<std::string>& properties,
                              const compute_options& options, process_pool& pool) {
  return detail::run_stages(r, properties, options, [&](detail::slice_job job) {
    return pool.apply_async(troupe_staged_run_slice, std::move(job));
  });
}

} // namespace troupe::staged
