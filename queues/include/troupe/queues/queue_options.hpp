#pragma once

#include <cstddef>

namespace troupe {


struct queue_options {
  /// Messages the queue holds at most; put() waits (or times out) when it is full.
  std::size_t max_messages = 1024;
  /// Bytes of encoded messages the queue holds at most (tensors moved through segments count
  /// only their small handle).
  std::size_t max_bytes = 16 << 20;
  /// Tensors with more element bytes than this travel through their own shared-memory segment
  /// instead of the queue's ring.
  std::size_t large_tensor_bytes = 64 << 10;
};

} // namespace troupe
