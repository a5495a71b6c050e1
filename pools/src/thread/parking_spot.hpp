// Where an idle worker thread of a thread pool sleeps, and how it is woken: a futex word of its
// own, so that waking one worker costs one system call and touches no lock another caller holds.
// Not std::atomic::wait: libstdc++'s spins, then yields, before it sleeps, and the worker has
// spun already only while a core was idle for it (idle_cores.hpp); on a busy machine those
// yields are what issue 40 took out.
#pragma once

#include <atomic>
#include <cstdint>

namespace troupe::detail {

class parking_spot {
public:
  enum state : std::uint32_t { awake = 0, asleep = 1, woken = 2 };

  /// The worker is about to sleep: from here on a waker may find it asleep.
  void lie_down() noexcept { word_.store(asleep, std::memory_order_seq_cst); }
  /// The worker found work after lying down: whether it got up before anyone woke it (if not, a
  /// waker counted it awake already).
  bool get_up() noexcept {
    std::uint32_t expected = asleep;
    return word_.compare_exchange_strong(expected, awake, std::memory_order_seq_cst);
  }
  /// Sleeps while nobody has woken it (spurious wake-ups loop), then is awake again.
  void sleep() noexcept;
  /// Wakes the worker if it is asleep; true if this call woke it.
  bool wake() noexcept;
  bool is_asleep() const noexcept { return word_.load(std::memory_order_seq_cst) == asleep; }

private:
  std::atomic<std::uint32_t> word_{awake};
};

} // namespace troupe::detail
