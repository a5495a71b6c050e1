// Shared-memory plumbing used by segments and queues: robust process-shared mutexes, named
// objects; futexes and process identity are in detail/futex.hpp and detail/process_id.hpp.
#pragma once

#include "troupe/queues/detail/futex.hpp"
#include "troupe/queues/detail/process_id.hpp"

#include <pthread.h>
#include <time.h>

#include <cerrno>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>

namespace troupe::detail {

/// Initialises a robust, process-shared mutex in shared memory.
void init_robust_mutex(pthread_mutex_t& mutex);

/// A ring's critical sections last well under a microsecond: a short spin on trylock takes a
/// contended lock without sleeping on the futex, which would cost both sides a system call.
inline int trylock_spinning(pthread_mutex_t& mutex) {
  int rc = pthread_mutex_trylock(&mutex);
  for (int spins = 0; rc == EBUSY && spins < 64; ++spins) {
    __builtin_ia32_pause();
    rc = pthread_mutex_trylock(&mutex);
  }
  return rc;
}

/// Locks a robust mutex, giving up at `until` (steady_clock is CLOCK_MONOTONIC here). If its
/// owner died holding it, `recover` runs (under the lock) to make the protected state consistent
/// before the mutex is marked consistent again. False if `until` passed first: a frozen holder
/// must not freeze its peers.
template <class Recover>
bool lock_robust(pthread_mutex_t& mutex, Recover&& recover, deadline until = std::nullopt) {
  int rc = trylock_spinning(mutex);
  if (rc == EBUSY && !until) {
    rc = pthread_mutex_lock(&mutex);
  } else if (rc == EBUSY) {
#if defined(__SANITIZE_THREAD__)
    // ThreadSanitizer's timedlock does not take a lock won from a dead owner (EOWNERDEAD) for
    // taken, and clocklock is not intercepted at all; its trylock handles both, so poll it.
    while (rc == EBUSY) {
      if (std::chrono::steady_clock::now() >= *until)
        return false;
      std::this_thread::sleep_for(std::chrono::microseconds{50});
      rc = pthread_mutex_trylock(&mutex);
    }
#else
    // timedlock wants a CLOCK_REALTIME deadline: the time left, from now.
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        *until - std::chrono::steady_clock::now())
                        .count();
    timespec at{};
    clock_gettime(CLOCK_REALTIME, &at);
    const auto ns = static_cast<long long>(at.tv_nsec) + std::max<long long>(left, 0);
    at.tv_sec += static_cast<time_t>(ns / 1'000'000'000);
    at.tv_nsec = static_cast<long>(ns % 1'000'000'000);
    rc = pthread_mutex_timedlock(&mutex, &at);
    if (rc == ETIMEDOUT)
      return false;
#endif
  }
  if (rc == EOWNERDEAD) {
    recover();
    pthread_mutex_consistent(&mutex);
  }
  return true;
}

/// Holds a robust mutex for a scope; unlock() and relock() let a waiter step out and back in.
/// With a deadline, owns() says whether the lock was had in time.
class robust_lock {
public:
  /// `recover` runs whenever the lock is taken (here or in relock) from an owner that died.
  robust_lock(pthread_mutex_t& mutex, std::function<void()> recover, deadline until = std::nullopt)
    : mutex_(mutex), recover_(std::move(recover)) {
    owned_ = lock_robust(mutex_, recover_, until);
  }
  ~robust_lock() {
    if (owned_)
      pthread_mutex_unlock(&mutex_);
  }
  robust_lock(const robust_lock&) = delete;
  robust_lock& operator=(const robust_lock&) = delete;
  bool owns() const noexcept { return owned_; }
  void unlock() {
    owned_ = false;
    pthread_mutex_unlock(&mutex_);
  }
  /// False if `until` passed before the lock was had again.
  bool relock(deadline until = std::nullopt) {
    owned_ = lock_robust(mutex_, recover_, until);
    return owned_;
  }

private:
  pthread_mutex_t& mutex_;
  std::function<void()> recover_;
  bool owned_ = false;
};

/// A mapped shared-memory object.
struct mapped_object {
  int fd = -1;
  void* base = nullptr;
  std::size_t size = 0;
  mapped_object() = default;
  mapped_object(mapped_object&& other) noexcept;
  mapped_object& operator=(mapped_object&& other) noexcept;
  ~mapped_object();
};

/// Creates (exclusive) an object and maps `size` bytes of it; nullopt if the name exists. With
/// `reserve`, /dev/shm must have `size` bytes free now, so that running out of it is a
/// capacity_error naming the size and what is free, rather than a SIGBUS on the first write.
std::optional<mapped_object> create_object(const std::string& name, std::size_t size,
                                           bool reserve = false);
/// Opens and maps an existing object, or only its first `at_most` bytes (a sweep of /dev/shm
/// reads headers only: mapping and unmapping every object whole, in each process that starts,
/// costs page tables and TLB shootdowns in proportion to all of shared memory); nullopt if it is
/// missing or empty. The mapping's size is the object's, if that is less.
std::optional<mapped_object> open_object(const std::string& name, std::size_t at_most = SIZE_MAX);

/// Shared-memory object names are "/" + this prefix + ...
inline constexpr const char* segment_prefix = "troupe.seg.";
inline constexpr const char* queue_prefix = "troupe.q.";

/// The pid in a segment's name (troupe.seg.<pid>.<n>.<r>), or 0.
std::int32_t creator_pid_of_segment(const std::string& name);

/// Unlinks the queues made with queue_options::owned_by_creator whose creator is gone.
std::size_t collect_orphan_queues();

/// collect_orphan_segments(), unless this process swept less than a second ago: what opening or
/// creating a queue runs.
void collect_orphans_now_and_then();

} // namespace troupe::detail
