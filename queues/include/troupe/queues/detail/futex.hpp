// Waiting on a word in memory shared between processes, and waking its waiters (Linux futexes,
// not private ones): queues, segments and a world's barriers in shared memory use them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

namespace troupe::detail {

/// When a wait gives up; none: it waits until woken.
using deadline = std::optional<std::chrono::steady_clock::time_point>;

/// Waits until `word` differs from `expected`, a wake-up, or `until` passes.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, deadline until);
void futex_wake_all(std::atomic<std::uint32_t>& word);

} // namespace troupe::detail
