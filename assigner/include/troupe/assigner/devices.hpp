// The devices of this machine, ready for troupe::assign.
//
//   auto devices = troupe::local_devices();   // "cuda:0", ..., then "cpu"
//
// GPUs come from NVIDIA's NVML, loaded at run time (libnvidia-ml.so.1, or the file named by the
// environment variable TROUPE_NVML_LIBRARY): no build dependency, and no GPUs listed when it
// cannot be loaded. A GPU's capacity is its free memory, its compute power 1 - its utilisation.
// The CPU's capacity is the memory available to new programs (MemAvailable); its compute power
// is left unset, so assigner_options::cpu_weight applies, as in machin.
#pragma once

#include "troupe/assigner/specs.hpp"

#include <vector>

namespace troupe {

std::vector<device_spec> local_devices();

} // namespace troupe
