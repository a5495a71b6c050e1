#pragma once

#include <cstddef>

namespace troupe {

/// How a queue is made: its bounds, and where large messages and tensors go.
struct queue_options {
  /// Messages the queue holds at most; put() waits (or times out) when it is full.
  std::size_t max_messages = 1024;
  /// Bytes of encoded messages the ring holds at most (tensors moved through segments count
  /// only their small handle). A message larger than a quarter of this does not go through the
  /// ring at all: its bytes travel in a shared-memory segment of their own, so a message of any
  /// size the machine's memory allows can be sent.
  std::size_t max_bytes = 16 << 20;
  /// Tensors with more element bytes than this travel through their own shared-memory segment
  /// instead of the queue's ring.
  std::size_t large_tensor_bytes = 64 << 10;
  /// Received copy-mode segments the queue keeps (at most 16) for later puts to reuse, so a
  /// stream of large tensors costs no system calls or page faults per message. 0: each
  /// segment is freed as soon as it is received. Spares are freed when the queue is unlinked.
  std::size_t spare_segments = 4;
  /// Encoded messages larger than this are refused with troupe::capacity_error naming both
  /// sizes (the message is not sent). 0: no limit but the shared memory the machine has.
  std::size_t max_message_bytes = 0;
  /// The queue belongs to the process that creates it: once that process is gone (killed
  /// before it could unlink it), collect_orphan_segments() unlinks it. For private queues
  /// such as a process pool's; a named queue that outlives its creator keeps this off.
  bool owned_by_creator = false;
};

} // namespace troupe
