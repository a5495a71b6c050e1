// What a test binary that links allocation_counter.cpp has allocated with operator new: that
// file replaces the global operator new and delete, so a test can watch memory being freed and
// reused (xtensor's arrays allocate through std::allocator, hence operator new).
#pragma once

#include <cstddef>

namespace troupe::testing {

/// Bytes allocated and not yet freed, in this process.
std::size_t live_bytes() noexcept;
/// The most live_bytes() has been since the last reset_peak().
std::size_t peak_bytes() noexcept;
/// Allocations of at least 64 KiB since the last reset_peak().
std::size_t large_allocations() noexcept;
void reset_peak() noexcept;

} // namespace troupe::testing
