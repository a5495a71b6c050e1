// Whether a thread about to wait may first watch, awake, for what it waits on.
//
// Watching pays while a core is idle: the thread it waits on finishes within microseconds, and
// the waiter saves a sleep and a wake-up. On a busy machine (other processes' threads runnable)
// it costs dearly: a spinning waiter holds the core the thread it waits on needs, and a yield
// hands the core to another process's thread for a whole time slice. So, by the kernel's count
// of runnable threads against the cores this process may use (read at most every few
// milliseconds) and troupe's own spinners (counted as they start and stop, as TBB's and glibc's
// adaptive waits count theirs):
//   - no runnable thread waits for a core: spin, pausing (fewer spinners than cores);
//   - only troupe's spinners are too many for the cores: spin, yielding, so a yield hands the
//     core to a thread of this process that has work (more of troupe's threads than cores);
//   - runnable threads that are not spinning are more than the cores (other processes, or this
//     one's working threads): sleep at once, to be woken by whoever finishes.
// A thread about to wait reads before it counts itself (it is among the others then); a spinner
// reads as one of the spinners. So a new waiter beside as many others as cores sleeps, where a
// spinner already watching goes on, yielding. Counting the new waiter at once as well made
// actor calls from 8 threads on 2 idle cores and a process pool's round trip half as fast
// (bench/scale --quick, 2026-11-28: 0.35 M calls/s against 0.79-0.92 M, 52 us against 22-29):
// the others there are troupe's own threads, soon done, or a pool's worker process, whose
// spinners this process cannot count.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

namespace troupe::detail {

/// How a waiter may wait before it sleeps.
enum class spin_mode { sleep, pause, yield };

/// The rule: how a waiter may wait with `runnable` threads on the machine (-1: unknown),
/// `spinners` of them troupe's spinners in this process, on `cores` cores.
spin_mode advise(long runnable, long spinners, long cores) noexcept;

/// How a thread about to wait may spin; unless `sleep`, it counts as spinning until
/// stop_spinning().
spin_mode start_spinning() noexcept;
/// How a spinner may go on, as the machine is now.
spin_mode keep_spinning() noexcept;
void stop_spinning() noexcept;
/// How often this thread asked start_spinning(): whether a wait considered spinning at all
/// (what a handle told not to spin never does), whatever the machine's load answered.
std::uint64_t spins_asked_on_this_thread() noexcept;

/// Watches `done()` for up to `limit`, pausing or yielding between looks as the machine allows:
/// true once done, false when the limit passed or the machine turned busy (the caller then
/// sleeps until woken).
template <class Done>
bool spin_while_idle(Done&& done, std::chrono::nanoseconds limit) {
  if (done())
    return true;
  auto mode = start_spinning();
  if (mode == spin_mode::sleep)
    return false;
  const auto until = std::chrono::steady_clock::now() + limit;
  bool finished = false;
  for (unsigned looks = 1;; ++looks) {
    if (done()) {
      finished = true;
      break;
    }
    if (mode == spin_mode::yield) {
      std::this_thread::yield();
    } else {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield");
#endif
      if (looks % 64 != 0)
        continue;
    }
    // The clock and the machine's load after each yield, or every 64 pauses: soon enough.
    if (std::chrono::steady_clock::now() >= until)
      break;
    mode = keep_spinning();
    if (mode == spin_mode::sleep)
      break;
  }
  stop_spinning();
  return finished;
}

} // namespace troupe::detail
