// How troupe's waits may spin (idle_cores.hpp): the kernel's count of runnable threads, from
// /proc/loadavg ("1.00 0.50 0.25 3/120 4242": 3 runnable now), read by whichever waiter finds
// the last reading stale, against the cores this process may use and troupe's spinners.
#include "troupe/actors/detail/idle_cores.hpp"

#include <cstdint>

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace troupe::detail {

namespace {

using clock = std::chrono::steady_clock;

/// How long a reading of the load stands: a few milliseconds, so a machine that turns busy
/// stops troupe's spinning within a time slice, and reading (a few microseconds) costs little.
constexpr auto reading_stands = std::chrono::milliseconds{4};

long count_usable_cores() noexcept {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    if (const int n = CPU_COUNT(&set); n > 0)
      return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

long usable_cores() noexcept {
  static const long cores = count_usable_cores();
  return cores;
}

/// The kernel's runnable threads now, or -1 where /proc/loadavg cannot be read.
long read_runnable() noexcept {
  const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  char text[128];
  const auto got = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (got <= 0)
    return -1;
  text[got] = '\0';
  const char* field = text; // the fourth field, "runnable/total"
  for (int skipped = 0; skipped < 3 && field != nullptr; ++skipped) {
    field = std::strchr(field, ' ');
    if (field != nullptr)
      ++field;
  }
  if (field == nullptr)
    return -1;
  char* end = nullptr;
  const long runnable = std::strtol(field, &end, 10);
  return end == field || *end != '/' ? -1 : runnable;
}

/// A cache line (x86-64, aarch64).
constexpr std::size_t line_bytes = 64;

/// troupe's threads spinning now, and what the last reading of the machine advised. The count
/// changes at every wait's start and end, and the advice is read at every look: on lines of
/// their own, so that counting does not take the line every waiter reads from.
struct machine_load {
  alignas(line_bytes) std::atomic<long> spinning{0};
  alignas(line_bytes) std::atomic<clock::rep> taken{0}; // when, in clock ticks; 0: never
  std::atomic<spin_mode> advice{spin_mode::pause};
  std::atomic<bool> reading{false}; // one thread reads while the others use the last reading
};

machine_load& load() noexcept {
  static machine_load shared;
  return shared;
}

/// What a fresh enough reading advises (advise(), idle_cores.hpp). The reading counts the
/// spinners of this process only: another troupe process's spinners (a pool's worker waiting
/// for its next chunk) count among the others.
spin_mode advice() noexcept {
  auto& l = load();
  const auto now = clock::now().time_since_epoch().count();
  const auto stands = std::chrono::duration_cast<clock::duration>(reading_stands).count();
  if (now - l.taken.load(std::memory_order_relaxed) >= stands &&
      !l.reading.exchange(true, std::memory_order_acquire)) {
    const auto mode =
      advise(read_runnable(), l.spinning.load(std::memory_order_relaxed), usable_cores());
    l.advice.store(mode, std::memory_order_relaxed);
    l.taken.store(now, std::memory_order_relaxed);
    l.reading.store(false, std::memory_order_release);
  }
  return l.advice.load(std::memory_order_relaxed);
}

thread_local std::uint64_t spins_asked = 0;

} // namespace

spin_mode advise(long runnable, long spinners, long cores) noexcept {
  if (runnable < 0)
    return spin_mode::pause; // unreadable (no /proc): troupe's own spinners are bounded
  if (runnable - spinners > cores)
    return spin_mode::sleep;
  return runnable > cores ? spin_mode::yield : spin_mode::pause;
}

std::uint64_t spins_asked_on_this_thread() noexcept { return spins_asked; }

spin_mode start_spinning() noexcept {
  ++spins_asked;
  auto mode = advice();
  if (mode == spin_mode::sleep)
    return mode;
  auto& spinning = load().spinning;
  // Counted first, so that two threads starting at once cannot both take the last core; past
  // the cores, spinners yield.
  if (spinning.fetch_add(1, std::memory_order_relaxed) >= usable_cores())
    mode = spin_mode::yield;
  return mode;
}

spin_mode keep_spinning() noexcept {
  const auto mode = advice();
  if (mode == spin_mode::pause && load().spinning.load(std::memory_order_relaxed) > usable_cores())
    return spin_mode::yield;
  return mode;
}

void stop_spinning() noexcept { load().spinning.fetch_sub(1, std::memory_order_relaxed); }

} // namespace troupe::detail
