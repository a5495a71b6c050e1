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
  /// Received copy-mode segments the queue keeps (at most 16) for later puts to reuse, so a
  /// stream of large tensors costs no system calls or page faults per message. 0: each
  /// segment is freed as soon as it is received. Spares are freed when the queue is unlinked.
  std::size_t spare_segments = 4;
};

} // namespace troupe
