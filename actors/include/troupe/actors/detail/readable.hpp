// Durations and sizes as people write them in messages: "10 ms", "1.5 s", "250 us", "64 MiB",
// "512 bytes" (three significant digits at most, no trailing zeros). Every error message that
// names a duration or a size says it through these.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace troupe::detail {

/// `duration` in the largest unit (ns, us, ms, s) it is at least one of: "10 ms", "1.5 s".
std::string readable(std::chrono::duration<double, std::nano> duration);

/// `bytes` in the largest binary unit (bytes, KiB, MiB, GiB, TiB) it is at least one of:
/// "512 bytes", "64 MiB", "1.5 GiB"; a size the short form rounds is followed by its exact count:
/// "9.77 KiB (10000 bytes)".
std::string readable_bytes(std::uint64_t bytes);

} // namespace troupe::detail
