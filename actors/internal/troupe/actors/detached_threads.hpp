// The threads of one runtime's detached actors (troupe's user actors, process pools' slot
// actors), counted until they exit. CAF 0.17's actor_system destructor stops its clock before
// it waits for detached threads, and an ending actor hands the clock one last event: once more
// than the clock's 64-slot ring end after it stopped, they wait for room forever. The runtime
// waits for these threads first, while the clock still runs (runtime_state::stop).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>

namespace troupe::detail {

class detached_threads {
public:
  /// Counts the calling thread, a detached actor's own, until it exits. Called as the actor
  /// starts, on its thread; a thread is counted once.
  static void count_this_thread(const std::shared_ptr<detached_threads>& owner);

  /// Waits until every counted thread has exited, or `limit` has passed; how many still run.
  std::size_t await_exit(std::chrono::milliseconds limit);

private:
  struct thread_mark;
  void exited();

  std::mutex mutex_;
  std::condition_variable all_exited_;
  std::size_t running_ = 0;
};

} // namespace troupe::detail
