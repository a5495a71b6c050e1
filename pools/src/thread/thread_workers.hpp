// A thread pool's workers: one thread per slot, each with a queue of leases (lease_queue.hpp).
// A job's leases go to one slot's queue, chosen in turn by each calling thread; a sleeping
// worker is woken to run or steal them; a worker that runs dry steals a waiting lease, or half
// the unstarted chunks of a running one, from another slot before it sleeps (parking_spot.hpp),
// and a thief that took more than its next chunk wakes a sleeper in turn.
// Nothing on a call's path is shared by every caller and worker: a caller takes one slot's lock,
// and wakes one sleeping worker when there is one.
//
// A stream's job whose consumer holds it back (job::startable) waits in a backlog of its own,
// and more of it is leased as the consumer lets it (wake()). close() lets every queued chunk run
// and then the threads end; terminate() fails what has not started. A slot whose thread ran
// max_tasks_per_worker chunks gets a new thread, which runs the initializer again.
#pragma once

#include "pool_engine.hpp"
#include "slot_registry.hpp"
#include "thread/lease_queue.hpp"
#include "thread/parking_spot.hpp"

#include "troupe/actors/runtime_state.hpp"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace troupe::detail {

/// What a thread pool's workers are made with.
struct thread_setup {
  std::size_t workers = 1;
  std::function<void()> initializer;
  std::size_t max_tasks = 0; // 0: a worker's thread is never replaced
  std::vector<void*> contexts; // empty, or one per worker
};

class thread_workers final : public pool_engine, public service {
public:
  thread_workers(runtime_state& rt, thread_setup setup);
  ~thread_workers() override;

  void submit(job_ptr job) override;
  void wake() override;
  void cancel(job_ptr job) override;
  void close() override;
  void terminate() override;
  void join() override;
  std::size_t size() const noexcept override { return slots_.size(); }
  std::vector<worker_stats> stats() const override { return registry_->stats(slots_.size()); }

  /// The runtime stops: as terminate() and join().
  void shutdown() noexcept override;

private:
  enum class mode { running, closing, terminating };

  /// One worker slot: its queue, where its thread sleeps, and what it has done.
  struct slot {
    explicit slot(std::shared_ptr<slot_registry> registry, std::size_t index)
      : meter(std::move(registry), index) {}
    lease_queue queue;
    parking_spot spot;
    slot_meter meter; // used by the slot's one thread at a time
  };

  /// What one thread of a slot keeps: it runs the initializer before its first chunk, and
  /// counts chunks against max_tasks_per_worker.
  struct thread_state {
    worker_env env;
    bool initialized = false;
    std::exception_ptr initializer_error;
    std::size_t tasks = 0;
  };

  // The pool's side (thread_workers.cpp).

  /// Leases chunks [first, last) of `job` into the queue of the caller's next slot, split so
  /// idle workers can take part; `accepted`: the pool took the job already (else it is refused,
  /// pool_closed, once the pool stopped taking work).
  void lease_out(const job_ptr& job, std::size_t first, std::size_t last, bool accepted);
  /// Leases what the consumers of held-back streams let start now (under backlog_mutex_).
  void lease_backlog();
  void wake_one(std::size_t preferred) noexcept;
  void wake_all() noexcept;
  /// Fails every chunk not started (of `only`, if given) with `why`.
  void fail_unstarted_work(const job* only, const std::exception_ptr& why);
  /// Stops taking work (`next` mode) and waits out callers still putting some in a queue.
  bool stop_taking_work(mode next);
  void start_thread(std::size_t index);
  void stop() noexcept;

  // A worker thread's side (worker_thread.cpp).

  void run_worker(std::size_t index) noexcept;
  /// The next lease for slot `index`: its own, else stolen from another slot.
  lease_ptr find_work(std::size_t index);
  /// Makes `taken` (stolen, or split off another slot's running lease) the running lease of
  /// slot `index`, and wakes a sleeper if it holds more than this thread starts now.
  lease_ptr run_here(std::size_t index, lease_ptr taken);
  /// Runs what it can of `work`; false if the thread must retire (max_tasks_per_worker).
  bool run_lease(thread_state& st, lease& work);
  /// Sleeps until woken, or until work shows; false if the thread should end instead.
  bool idle(std::size_t index);
  bool work_visible() const noexcept;
  /// Whether any slot holds work another thread could take, looked at under each queue's lock.
  bool work_to_share();
  /// Whether the pool no longer needs this thread: stopping, and nothing left to run.
  bool finished_here() const noexcept;

  std::shared_ptr<service_registry> services_;
  const thread_setup setup_;
  std::vector<std::unique_ptr<slot>> slots_;
  std::shared_ptr<slot_registry> registry_ = std::make_shared<slot_registry>();
  std::atomic<mode> mode_{mode::running};
  std::atomic<std::size_t> sleepers_{0}; // workers asleep now: read by every caller, rarely written
  std::atomic<bool> swept_{false}; // close or terminate swept every queue: idle workers end

  // Streams held back by their consumers, and how far each has been leased.
  std::mutex backlog_mutex_;
  std::deque<std::pair<job_ptr, std::size_t>> backlog_;

  // Every thread ever started, so join() waits for all of them (a retiring thread adds its
  // successor before it ends).
  std::mutex threads_mutex_;
  std::vector<std::thread> threads_;
};

} // namespace troupe::detail
