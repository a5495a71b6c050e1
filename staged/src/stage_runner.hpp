// The driver of parallel_compute, whatever pool runs the slices.
#pragma once

#include "troupe/actors/async_result.hpp"

#include "slices.hpp"

#include <functional>

namespace troupe::staged::detail {

using slice_starter = std::function<async_result<values>(slice_job)>;

/// Plans, then runs each stage (distributed ones through `start`), dropping intermediates.
compute_plan run_stages(record& r, const std::vector<std::string>& properties,
                        const compute_options& options, const slice_starter& start);

} // namespace troupe::staged::detail
