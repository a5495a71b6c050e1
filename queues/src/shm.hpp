// Shared-memory plumbing used by segments and queues: robust process-shared mutexes, futexes,
// process identity, named objects.
#pragma once

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace troupe::detail {

/// A process as a holder: pid plus its start time, which tells a recycled pid apart.
struct process_id {
  std::int32_t pid = 0;
  std::uint64_t start_time = 0;
  static process_id self();
  bool alive() const;
  friend bool operator==(const process_id&, const process_id&) = default;
};

/// Initialises a robust, process-shared mutex in shared memory.
void init_robust_mutex(pthread_mutex_t& mutex);

/// Locks a robust mutex. If its owner died holding it, `recover` runs (under the lock) to make
/// the protected state consistent before the mutex is marked consistent again.
template <class Recover>
void lock_robust(pthread_mutex_t& mutex, Recover&& recover) {
  const int rc = pthread_mutex_lock(&mutex);
  if (rc == EOWNERDEAD) {
    recover();
    pthread_mutex_consistent(&mutex);
  }
}

/// Holds a robust mutex for a scope; unlock() and relock() let a waiter step out and back in.
class robust_lock {
public:
  /// `recover` runs whenever the lock is taken (here or in relock) from an owner that died.
  robust_lock(pthread_mutex_t& mutex, std::function<void()> recover)
    : mutex_(mutex), recover_(std::move(recover)) {
    lock_robust(mutex_, recover_);
  }
  ~robust_lock() {
    if (owned_)
      pthread_mutex_unlock(&mutex_);
  }
  robust_lock(const robust_lock&) = delete;
  robust_lock& operator=(const robust_lock&) = delete;
  void unlock() {
    owned_ = false;
    pthread_mutex_unlock(&mutex_);
  }
  void relock() {
    lock_robust(mutex_, recover_);
    owned_ = true;
  }

private:
  pthread_mutex_t& mutex_;
  std::function<void()> recover_;
  bool owned_ = true;
};

/// Waits until `word` differs from `expected` or `deadline` passes (cross-process futex).
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                std::optional<std::chrono::steady_clock::time_point> deadline);
void futex_wake_all(std::atomic<std::uint32_t>& word);

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

/// Creates (exclusive) or opens an object and maps `size` bytes of it; nullopt if creating an
/// existing name, or opening a missing one.
std::optional<mapped_object> create_object(const std::string& name, std::size_t size);
std::optional<mapped_object> open_object(const std::string& name);

/// Shared-memory object names are "/" + this prefix + ...
inline constexpr const char* segment_prefix = "troupe.seg.";
inline constexpr const char* queue_prefix = "troupe.q.";

} // namespace troupe::detail
