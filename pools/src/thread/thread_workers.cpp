// A thread pool's side of its workers: where jobs go, how sleeping workers are woken, and how
// the pool closes, terminates, drops a stream and is joined. What each worker thread does is in
// worker_thread.cpp.
#include "thread/thread_workers.hpp"

#include "lost_work.hpp"

#include "troupe/actors/async_result.hpp"
#include "troupe/actors/error.hpp"

#include <algorithm>
#include <random>

namespace troupe::detail {

namespace {

/// The slot whose queue this calling thread fills next: each caller goes round the slots from
/// a place of its own, so callers spread over the slots without sharing a counter.
std::size_t next_slot(std::size_t slots) noexcept {
  thread_local std::size_t turn = std::random_device{}();
  return turn++ % slots;
}

std::exception_ptr closed_error(const char* why) {
  return std::make_exception_ptr(pool_closed(why));
}

} // namespace

thread_workers::thread_workers(runtime_state& rt, thread_setup setup)
  : services_(rt.services), setup_(std::move(setup)) {
  for (std::size_t i = 0; i < setup_.workers; ++i)
    slots_.push_back(std::make_unique<slot>(registry_, i));
  services_->add(this);
  for (std::size_t i = 0; i < setup_.workers; ++i)
    start_thread(i);
}

thread_workers::~thread_workers() {
  if (services_->remove(this))
    stop();
}

void thread_workers::shutdown() noexcept { stop(); }

void thread_workers::stop() noexcept {
  terminate();
  try {
    join();
  } catch (...) {
    report_escaped_exception("joining a thread pool's workers");
  }
}

void thread_workers::start_thread(std::size_t index) {
  std::lock_guard guard{threads_mutex_};
  threads_.emplace_back([this, index] { run_worker(index); });
}

void thread_workers::submit(job_ptr job) {
  if (job->chunk_count() == 0) {
    if (mode_.load() != mode::running)
      throw pool_closed("the pool is closed: it accepts no new work");
    job->complete_if_empty();
    return;
  }
  const auto startable = std::min(job->chunk_count(), job->startable(0));
  if (startable == job->chunk_count())
    return lease_out(job, 0, startable, false);
  // A stream its consumer holds back: what may start now goes out, the rest waits here.
  std::lock_guard guard{backlog_mutex_};
  if (startable > 0)
    lease_out(job, 0, startable, false);
  else if (mode_.load() != mode::running)
    throw pool_closed("the pool is closed: it accepts no new work");
  backlog_.emplace_back(std::move(job), startable);
  lease_backlog(); // marks it stalled, or leases what its consumer let start meanwhile
}

void thread_workers::lease_out(const job_ptr& job, std::size_t first, std::size_t last,
                               bool accepted) {
  // As many leases as slots (each a run of chunks), so each idle worker can take one; halves of
  // running leases are stolen after that.
  const auto chunks = last - first;
  const auto pieces = std::min(chunks, slots_.size());
  const auto at = next_slot(slots_.size());
  auto& queue = slots_[at]->queue;
  const auto refuse = [&] { return !accepted && mode_.load() != mode::running; };
  for (std::size_t piece = 0, start = first; piece < pieces; ++piece) {
    const auto count = chunks / pieces + (piece < chunks % pieces ? 1 : 0);
    if (!queue.push(std::make_shared<lease>(job, start, count), refuse)) {
      if (mode_.load() == mode::terminating)
        throw pool_closed("the pool is terminated: it accepts no new work");
      throw pool_closed("the pool is closed: it accepts no new work");
    }
    accepted = true; // its first lease is in: the rest of the job goes too
    start += count;
  }
  for (std::size_t woken = 0; woken < pieces; ++woken)
    wake_one(at);
}

void thread_workers::lease_backlog() {
  for (auto it = backlog_.begin(); it != backlog_.end();) {
    auto& [job, leased] = *it;
    // Until the job says no more may start: saying so marks it stalled, and its consumer then
    // wakes the pool when it lets more start.
    while (leased < job->chunk_count()) {
      const auto startable = std::min(job->chunk_count(), job->startable(leased));
      if (startable <= leased)
        break;
      lease_out(job, leased, startable, true);
      leased = startable;
    }
    it = leased >= job->chunk_count() ? backlog_.erase(it) : std::next(it);
  }
}

void thread_workers::wake() {
  std::lock_guard guard{backlog_mutex_};
  if (mode_.load() != mode::terminating)
    lease_backlog();
}

void thread_workers::wake_one(std::size_t preferred) noexcept {
  if (sleepers_.load(std::memory_order_seq_cst) == 0)
    return;
  for (std::size_t step = 0; step < slots_.size(); ++step)
    if (slots_[(preferred + step) % slots_.size()]->spot.wake()) {
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
      return;
    }
}

void thread_workers::wake_all() noexcept {
  for (auto& s : slots_)
    if (s->spot.wake())
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

bool thread_workers::stop_taking_work(mode next) {
  auto current = mode_.load();
  do {
    if (current >= next)
      return false;
  } while (!mode_.compare_exchange_weak(current, next));
  // A caller that saw the pool running under a queue's lock has put its lease in once this
  // has taken every queue's lock.
  for (auto& s : slots_)
    s->queue.sweep();
  return true;
}

void thread_workers::close() {
  if (!stop_taking_work(mode::closing))
    return;
  {
    // Streams finish without their consumers, or join() would wait on them.
    std::lock_guard guard{backlog_mutex_};
    for (auto& [job, leased] : backlog_)
      job->lift_limit();
    lease_backlog();
  }
  swept_.store(true);
  wake_all();
}

void thread_workers::terminate() {
  if (!stop_taking_work(mode::terminating))
    return;
  fail_unstarted_work(nullptr, closed_error("the pool was terminated before this work started"));
  swept_.store(true);
  wake_all();
}

void thread_workers::cancel(job_ptr job) {
  fail_unstarted_work(job.get(), closed_error("the stream was dropped before this item started"));
}

void thread_workers::fail_unstarted_work(const job* only, const std::exception_ptr& why) {
  {
    std::lock_guard guard{backlog_mutex_};
    std::erase_if(backlog_, [&](auto& entry) {
      auto& [job, leased] = entry;
      if (only != nullptr && job.get() != only)
        return false;
      fail_chunks(*job, leased, job->chunk_count(), why);
      return true;
    });
  }
  for (auto& s : slots_)
    s->queue.take_out(
      [only](const lease& work) { return only == nullptr || work.job().get() == only; },
      [&](lease& work) { fail_unstarted(work, why); });
}

void thread_workers::join() {
  if (mode_.load() == mode::running)
    throw state_error("join() on a running pool: call close() or terminate() first");
  for (;;) {
    std::thread next;
    {
      std::lock_guard guard{threads_mutex_};
      if (threads_.empty())
        return;
      next = std::move(threads_.back());
      threads_.pop_back();
    }
    if (next.get_id() == std::this_thread::get_id()) {
      next.detach(); // a task that joins its own pool: its thread ends once the task returns
      continue;
    }
    next.join(); // a retiring thread put its successor in the list before it ended
  }
}

} // namespace troupe::detail
