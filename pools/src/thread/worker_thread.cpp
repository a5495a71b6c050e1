// What each worker thread of a thread pool does: takes the next lease of its slot, or steals
// one from another slot, runs its chunks, and sleeps when there is nothing to run; after
// max_tasks_per_worker chunks it hands its slot to a new thread.
#include "thread/thread_workers.hpp"

#include "lost_work.hpp"

#include "troupe/actors/async_result.hpp"
#include "troupe/actors/detail/idle_cores.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/pools/detail/worker_scope.hpp"

#include <chrono>

namespace troupe::detail {

namespace {

/// How long an idle worker watches for work, while a core is idle for it, before it sleeps.
constexpr auto idle_watch = std::chrono::microseconds{50};

} // namespace

void thread_workers::run_worker(std::size_t index) noexcept {
  thread_state st;
  st.env.worker_index = index;
  st.env.context = setup_.contexts.empty() ? nullptr : setup_.contexts[index];
  auto& here = *slots_[index];
  for (;;) {
    auto work = find_work(index);
    if (!work) {
      if (!idle(index))
        return;
      continue;
    }
    // A lease that changed slots (stolen, or split off another's) was in no queue for a moment,
    // where terminate() could not sweep it. It is in this slot's queue now: either the sweep
    // saw it here, or this thread sees the pool terminating, set before the sweep began.
    if (mode_.load() == mode::terminating)
      fail_unstarted(
        *work,
        std::make_exception_ptr(pool_closed("the pool was terminated before this work started")),
        &here.meter);
    here.meter.begin();
    bool retire = false;
    try {
      retire = !run_lease(st, *work);
    } catch (...) { // the machinery failed, not a task: what the lease holds fails, typed
      const auto why =
        as_worker_failure(std::current_exception(), "worker " + std::to_string(index));
      fail_unstarted(*work, why, &here.meter);
    }
    if (!retire) {
      here.queue.finished();
      continue;
    }
    // Its chunks are done: a new thread takes the slot, and what is left of the lease.
    if (work->unclaimed() > 0)
      here.queue.put_back(std::move(work));
    else
      here.queue.finished();
    registry_->replaced(index);
    try {
      start_thread(index);
    } catch (...) { // no thread could be made: this one goes on in the slot
      report_escaped_exception("starting a thread pool's new worker");
      st = thread_state{st.env};
      continue;
    }
    return;
  }
}

lease_ptr thread_workers::find_work(std::size_t index) {
  auto& here = slots_[index]->queue;
  if (auto work = here.take_next())
    return work;
  const auto count = slots_.size();
  for (std::size_t step = 1; step < count; ++step)
    if (auto stolen = slots_[(index + step) % count]->queue.steal_waiting())
      return run_here(index, std::move(stolen));
  // Nothing waits: half of what the fullest running lease has not started.
  std::size_t fullest = count, most = 0;
  for (std::size_t step = 1; step < count; ++step) {
    const auto at = (index + step) % count;
    if (const auto unclaimed = slots_[at]->queue.running_unclaimed(); unclaimed > most) {
      most = unclaimed;
      fullest = at;
    }
  }
  if (fullest == count)
    return nullptr;
  auto half = slots_[fullest]->queue.split_running(lease::max_chunks);
  if (!half)
    return nullptr;
  return run_here(index, std::move(half));
}

lease_ptr thread_workers::run_here(std::size_t index, lease_ptr taken) {
  // On its way here the lease was in no queue, where a thread looking for work before it went
  // to sleep could not see it (idle()); so the thief wakes one when there is more than its own
  // next chunk to share, as a caller that leases work does.
  auto& here = slots_[index]->queue;
  here.put_back(std::move(taken));
  auto work = here.take_next();
  if (work && work->unclaimed() > 1)
    wake_one(index);
  return work;
}

bool thread_workers::run_lease(thread_state& st, lease& work) {
  auto* runnable = dynamic_cast<thread_job*>(work.job().get());
  if (runnable == nullptr)
    throw state_error("a process pool's job reached a thread pool's worker");
  const auto room = setup_.max_tasks == 0 ? lease::max_chunks : setup_.max_tasks - st.tasks;
  std::size_t chunk = 0;
  if (room == 0 || !work.claim(chunk))
    return room != 0; // all of it was taken back before it started, or the thread retires
  auto& meter = slots_[st.env.worker_index]->meter;
  // Initialized lazily, so a worker that never gets a task never pays for (say) loading a model.
  if (!st.initialized) {
    st.initialized = true;
    if (setup_.initializer) {
      try {
        setup_.initializer();
      } catch (...) {
        st.initializer_error = std::current_exception();
      }
    }
  }
  if (st.initializer_error) {
    // Fail the work fast with the real cause rather than leave it waiting on a broken worker.
    meter.count(0, 1);
    fail_chunks(*work.job(), chunk, chunk + 1, st.initializer_error);
    fail_unstarted(work, st.initializer_error, &meter);
    return true;
  }
  const worker_scope identity{st.env.worker_index};
  std::size_t ran = 0, failed = 0;
  do {
    failed += runnable->run(chunk, st.env);
    ++ran;
  } while (ran < room && work.claim(chunk));
  st.tasks += ran;
  meter.count(ran, failed);
  work.job()->ended(ran);
  return setup_.max_tasks == 0 || st.tasks < setup_.max_tasks;
}

bool thread_workers::work_visible() const noexcept {
  for (const auto& s : slots_)
    if (s->queue.has_waiting())
      return true;
  return false;
}

bool thread_workers::work_to_share() {
  for (const auto& s : slots_)
    if (s->queue.has_work_to_share())
      return true;
  return false;
}

bool thread_workers::finished_here() const noexcept { return swept_.load() && !work_visible(); }

bool thread_workers::idle(std::size_t index) {
  if (finished_here())
    return false;
  if (spin_while_idle([this] { return work_visible() || swept_.load(); }, idle_watch))
    return true;
  auto& spot = slots_[index]->spot;
  spot.lie_down();
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  // Work put in a queue, or left unstarted in a running lease, before this worker lay down is
  // seen here (under each queue's lock); work put in after wakes it: its caller, or the thief
  // that carried a lease between queues (run_here), counts this sleeper.
  if (swept_.load() || work_to_share()) {
    if (spot.get_up())
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    else
      spot.sleep(); // a waker counted it awake already: take the wake-up it sent
    return true;
  }
  spot.sleep();
  return true;
}

} // namespace troupe::detail
