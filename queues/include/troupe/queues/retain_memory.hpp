// An opt-in for programs that receive large tensors again and again (copy mode, `get()`):
//
//   troupe::retain_freed_memory(256 << 20);   // once, early in main
//
// glibc hands every allocation above 32 MiB back to the kernel when it is freed, so the next
// 64 MiB array is mapped anew and the kernel zeroes every page of it before the queue copies
// the message in: here that zeroing costs more than the copy. With this call, allocations up to
// `largest_bytes` come from the heap and freed ones stay with the process for the next, at the
// price of memory the process no longer gives back while it runs. It changes malloc for the
// whole process (mallopt M_MMAP_THRESHOLD and M_TRIM_THRESHOLD), which is why it is not done
// behind your back; `get_into()` with an array you keep avoids the cost without it.
#pragma once

#include <cstddef>

namespace troupe {

/// Keeps freed allocations up to `largest_bytes` (at most 512 MiB) in this process for reuse.
/// Throws troupe::invalid_argument for 0 or more than 512 MiB, and troupe::state_error if the C
/// library refuses.
void retain_freed_memory(std::size_t largest_bytes);

} // namespace troupe
