// parallel_compute (PhiML's): fills a record's cache with the properties asked for, stage by
// stage (see plan.hpp), distributed stages as slices on a pool, host stages on this thread.
//
//   troupe::runtime rt;
//   troupe::process_pool pool{rt, {.workers = 2}};
//   record r{spectra, {{"signal", signal}}};
//   parallel_compute(r, {"mean_power"}, {}, pool);
//
// Each slice is sent only the fields its stage reads and the earlier results it reads (a value
// without a split dim goes whole to every slice); its results are stacked back along the split
// dims, which come first in the stacked tensor. After each stage, what earlier stages computed
// and nothing later reads is dropped, unless asked for, persistent, cached before the call, or
// keep_intermediate; a same-stage intermediate never leaves its slice. Properties cached
// before the call are never computed again. With max_workers = 0, or no stage to split,
// everything runs here. The first slice or property that throws fails the call with its
// exception (a dead worker: worker_lost), once the slices already started are done.
#pragma once

#include "troupe/pools/pools_fwd.hpp"
#include "troupe/staged/plan.hpp"

namespace troupe::staged {

/// Slices on a thread pool: they read the record's schema directly.
compute_plan parallel_compute(record& r, const std::vector<std::string>& properties,
                              const compute_options& options, thread_pool& pool);
/// Slices on worker processes, which find the schema by name: register it (register_schema)
/// at namespace scope of the pool's worker program.
compute_plan parallel_compute(record& r, const std::vector<std::string>& properties,
                              const compute_options& options, process_pool& pool);

} // namespace troupe::staged
