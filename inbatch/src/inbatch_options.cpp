#include "troupe/inbatch/inbatch_options.hpp"

#include "troupe/inbatch/detail/inbatch_pools.hpp" // check_inbatch_settings, available_cpus

#include <sched.h>

#include <algorithm>
#include <string>
#include <thread>

namespace troupe {

inbatch_target inbatch_target_named(std::string_view name) {
  if (name == "threads" || name == "t")
    return inbatch_target::threads;
  if (name == "processes" || name == "mpc" || name == "m")
    return inbatch_target::processes;
  if (name == "async" || name == "a")
    return inbatch_target::async;
  if (name == "sequential" || name == "for" || name == "f")
    return inbatch_target::sequential;
  throw invalid_argument("unknown inbatch_parallel target '" + std::string{name} +
                         "': use threads (t), processes (mpc, m), async (a) or sequential "
                         "(for, f)");
}

std::size_t default_inbatch_workers() { return 4 * detail::available_cpus(); }

namespace detail {

std::size_t available_cpus() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) > 0)
    return static_cast<std::size_t>(CPU_COUNT(&cpus));
  return std::max(1u, std::thread::hardware_concurrency());
}

void check_inbatch_settings(inbatch_target target, bool debug, std::size_t n_workers) {
  switch (target) {
  case inbatch_target::threads:
  case inbatch_target::processes:
  case inbatch_target::async:
  case inbatch_target::sequential: break;
  default:
    throw invalid_argument("unknown inbatch_parallel target " +
                           std::to_string(static_cast<int>(target)));
  }
  if (debug && target != inbatch_target::sequential)
    throw invalid_argument("inbatch_parallel: debug runs items one after the other, so it needs "
                           "inbatch_target::sequential, not a parallel target");
  if (n_workers == 0)
    throw invalid_argument("inbatch_parallel: n_workers is 0; at least 1 worker is needed");
}

} // namespace detail

} // namespace troupe
