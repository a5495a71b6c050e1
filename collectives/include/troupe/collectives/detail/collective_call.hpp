// One collective operation as a group's engine takes it: what the group's methods make.
#pragma once

#include "troupe/collectives/collective_options.hpp"
#include "troupe/collectives/detail/tensor_view.hpp"

#include <cstdint>
#include <vector>

namespace troupe::detail {

class collective_core;

enum class collective_kind : std::uint8_t {
  send,
  recv,
  broadcast,
  all_reduce,
  reduce,
  all_gather,
  gather,
  scatter,
  barrier
};

/// One operation as the group's engine takes it.
struct collective_call {
  collective_kind kind = collective_kind::barrier;
  tensor_view tensor;
  std::vector<tensor_view> list; // all_gather and gather outputs, scatter inputs
  int peer = -1; // send: destination; recv: source; else the root
  int tag = 0; // send and recv
  reduce_op op = reduce_op::sum;
};

} // namespace troupe::detail
