// A process as something shared memory records: what holds a segment, made a queue, or opened a
// world's barrier object, asked later whether it still lives.
#pragma once

#include <cstdint>

namespace troupe::detail {

/// A process as a holder: pid plus its start time, which tells a recycled pid apart.
struct process_id {
  std::int32_t pid = 0;
  std::uint64_t start_time = 0;
  static process_id self();
  bool alive() const;
  friend bool operator==(const process_id&, const process_id&) = default;
};

} // namespace troupe::detail
