// What staged/ throws: troupe errors, each naming what was wrong.
#pragma once

#include "troupe/actors/error.hpp"

namespace troupe::staged {

/// A property read outside parallel_compute before it was computed, where its on_direct_eval
/// says raise (PhiML's NonParallelAccess).
class non_parallel_access : public troupe::state_error {
public:
  using state_error::state_error;
};

/// parallel_compute cannot plan the call: an unknown property, properties that depend on each
/// other in a circle, a memory limit without a cache folder.
class invalid_plan : public troupe::invalid_argument {
public:
  using invalid_argument::invalid_argument;
};

} // namespace troupe::staged
