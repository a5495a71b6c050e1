// The dispatcher: hands chunks to workers by demand, tracks every lease a worker holds, and
// stops the workers on close or terminate.
//
// Demand: each worker holds at most `credit` leases (one running, one queued so it never idles
// waiting for a round trip). Lease sizes are guided: a share of what remains, so big jobs cost a
// handful of messages and the tail is split finely. A worker that runs dry takes back half of
// the unstarted chunks of the fullest lease another worker holds, so one slow item never holds
// up the items queued behind it.
//
// Its table (slots, leases, backlog) is under a lock of its own, which every handler holds: a
// caller submitting a job takes the lock, if free, and hands the job's first leases to idle
// slots itself (submit_directly), one wake-up fewer on every call than a message to the
// dispatcher would cost; finding it taken, it sends the job instead. Everything else (leases
// done, workers lost, close, terminate) reaches the dispatcher as a message.
#include "actors.hpp"
#include "lost_work.hpp"
#include "slot_actor.hpp"

#include "troupe/actors/detail/result_state.hpp"
#include "troupe/actors/error.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <atomic>
#include <deque>
#include <exception>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace troupe::detail {

class dispatch_table {
public:
  struct slot_state {
    worker_actor handle;
    bool remote = false; // a node from another host
    bool gone = false; // a node that left: its slot stays, empty, so indices stay valid
    std::size_t generation = 0;
    std::vector<lease_ptr> held;
    std::size_t tasks_done = 0;
    std::size_t granted = 0; // chunks of the held leases, as granted
  };

  struct queued_job {
    job_ptr job;
    std::size_t next_chunk = 0; // chunks before it have been leased
    std::size_t end_chunk = 0; // and chunks from here on are not this entry's
    std::size_t attempts = 0; // times these chunks ran on workers that were lost
  };

  enum class mode { running, closing, terminating };

  std::mutex mutex; // held by every handler, and by a caller submitting directly
  // Submits sent as messages and not yet handled: while there are any, a caller's next job goes
  // the same way, so that each caller's jobs enter the backlog in the order it submitted them.
  std::atomic<std::size_t> queued_submits{0};
  std::shared_ptr<const worker_setup> setup;
  std::vector<slot_state> slots;
  std::deque<queued_job> backlog;
  mode current = mode::running;
  std::size_t workers_to_stop = 0; // > 0 while stopping
};

namespace {

constexpr std::size_t credit = 2;

using slot_state = dispatch_table::slot_state;
using queued_job = dispatch_table::queued_job;
using mode = dispatch_table::mode;

/// Whether this thread holds a dispatch table's lock: a callback run under it (a progress
/// callback of a failed chunk) that submits again must go by message, not take it twice.
thread_local bool holding_a_table = false;

/// Holds `table`'s lock (or tried to), and says so to this thread.
class table_lock {
public:
  explicit table_lock(dispatch_table& table) : guard_(table.mutex) { holding_a_table = true; }
  table_lock(dispatch_table& table, std::try_to_lock_t) : guard_(table.mutex, std::try_to_lock) {
    holding_a_table = guard_.owns_lock();
  }
  ~table_lock() { holding_a_table = false; }
  table_lock(const table_lock&) = delete;
  table_lock& operator=(const table_lock&) = delete;

  bool held() const noexcept { return guard_.owns_lock(); }

private:
  std::unique_lock<std::mutex> guard_;
};

struct dispatcher_state {
  std::shared_ptr<dispatch_table> table;
  static inline const char* name = "troupe.dispatcher";
};

using dispatcher_self = dispatcher_actor::stateful_pointer<dispatcher_state>;

dispatch_table& table_of(dispatcher_self self) { return *self->state.table; }

std::exception_ptr closed_error(const char* why) {
  return std::make_exception_ptr(pool_closed(why));
}

void spawn_worker(dispatcher_self self, std::size_t index,
                  std::shared_ptr<worker_link> node = nullptr) {
  auto& st = table_of(self);
  auto& s = st.slots[index];
  ++s.generation;
  s.tasks_done = 0;
  tsan_release(st.setup.get());
  s.handle = spawn_slot_actor(self->system(), caf::actor_cast<dispatcher_actor>(self), index,
                              s.generation, st.setup, std::move(node));
  self->monitor(s.handle);
}

/// The leases slot `s` holds that its worker has yet to finish (one whose last results are being
/// settled no longer keeps the slot: lease::mark_finishing).
std::size_t occupying(const slot_state& s) {
  return static_cast<std::size_t>(std::count_if(
    s.held.begin(), s.held.end(), [](const lease_ptr& l) { return !l->finishing(); }));
}

/// How many more chunks slot `s` may be granted before it must be replaced.
std::size_t allowance(const dispatch_table& st, const slot_state& s) {
  if (st.setup->max_tasks == 0)
    return lease::max_chunks;
  const auto used = s.tasks_done + s.granted;
  return used >= st.setup->max_tasks ? 0 : std::min(lease::max_chunks, st.setup->max_tasks - used);
}

/// From the dispatcher or a submitting caller: the slot actor does not ask who sent a lease.
void give(slot_state& s, lease_ptr work) {
  s.granted += work->granted();
  s.held.push_back(work);
  send_from_outside(s.handle, std::move(work));
}

/// A lease from the backlog for a worker allowed `limit` chunks, or null if nothing can start.
lease_ptr lease_from_backlog(dispatch_table& st, std::size_t limit) {
  std::size_t serving = 0;
  for (auto& s : st.slots)
    serving += !s.gone;
  for (auto it = st.backlog.begin(); it != st.backlog.end();) {
    const auto chunks = it->end_chunk;
    if (it->next_chunk >= chunks) {
      it = st.backlog.erase(it);
      continue;
    }
    const auto startable = std::min(chunks, it->job->startable(it->next_chunk));
    if (startable <= it->next_chunk) {
      ++it; // throttled by its consumer; wake_atom brings us back
      continue;
    }
    const auto available = startable - it->next_chunk;
    const auto guided =
      std::max<std::size_t>(1, available / (2 * std::max<std::size_t>(1, serving)));
    const auto count = std::min({guided, limit, available, lease::max_chunks});
    auto work = std::make_shared<lease>(it->job, it->next_chunk, count, it->attempts);
    it->next_chunk += count;
    if (it->next_chunk >= chunks)
      st.backlog.erase(it);
    return work;
  }
  return nullptr;
}

/// How much of `held`, the `position`th lease its slot holds, a thief may take. The slot's first
/// lease, not yet started, is on its way to a worker about to run it: a lone chunk there stays
/// (taking it would only wake a second worker to run what the first was woken for).
lease::portion stealable_share(const lease& held, std::size_t position) {
  return position == 0 && !held.started() ? lease::portion::under_half : lease::portion::half;
}

/// Half the unstarted chunks of the fullest lease held by another worker, or null.
lease_ptr steal_for(dispatch_table& st, const slot_state& thief, std::size_t limit) {
  lease* victim = nullptr;
  auto share = lease::portion::half;
  std::size_t most = 0;
  for (auto& s : st.slots) {
    if (&s == &thief || s.gone)
      continue;
    std::size_t position = 0; // among the leases that occupy the slot
    for (const auto& lease_held : s.held) {
      if (lease_held->finishing())
        continue;
      auto& held = *lease_held;
      const auto held_share = stealable_share(held, position++);
      if (const auto takeable = held.takeable(held_share); takeable > most) {
        most = takeable;
        victim = &held;
        share = held_share;
      }
    }
  }
  if (victim == nullptr)
    return nullptr;
  const auto [first, last] = victim->take_back(share, limit);
  if (first == last)
    return nullptr;
  return std::make_shared<lease>(victim->job(), first, last - first, victim->attempts());
}

void pump(dispatch_table& st) {
  if (st.current == mode::terminating || st.workers_to_stop > 0)
    return;
  // Idle workers first, then top the others up to their credit.
  bool backlog_dry = false;
  for (std::size_t held = 0; held < credit && !backlog_dry; ++held) {
    for (auto& s : st.slots) {
      if (s.gone || occupying(s) != held)
        continue;
      const auto limit = allowance(st, s);
      if (limit == 0)
        continue;
      auto work = lease_from_backlog(st, limit);
      if (!work) {
        backlog_dry = true;
        break;
      }
      give(s, std::move(work));
    }
  }
  for (auto& s : st.slots) {
    if (s.gone || occupying(s) != 0)
      continue;
    const auto limit = allowance(st, s);
    if (limit == 0)
      continue;
    if (auto work = steal_for(st, s, limit))
      give(s, std::move(work));
  }
}

void stop_if_idle(dispatcher_self self) {
  auto& st = table_of(self);
  if (st.current == mode::running || st.workers_to_stop > 0 || !st.backlog.empty())
    return;
  for (auto& s : st.slots)
    if (!s.held.empty())
      return;
  for (auto& s : st.slots)
    if (!s.gone) {
      ++st.workers_to_stop;
      self->send_exit(s.handle, caf::exit_reason::user_shutdown);
    }
  if (st.workers_to_stop == 0)
    self->quit();
}

/// What the workers hold of `only` (of every job if null) and have not started fails with `why`.
void fail_unstarted_held(dispatch_table& st, const job_ptr* only, const std::exception_ptr& why) {
  for (auto& s : st.slots)
    for (auto& held : s.held)
      if (only == nullptr || held->job() == *only)
        fail_unstarted(*held, why);
}

void on_done(dispatcher_self self, std::size_t index, std::size_t generation,
             const lease_ptr& work) {
  auto& st = table_of(self);
  auto& s = st.slots[index];
  if (s.generation != generation)
    return;
  const auto held = std::find(s.held.begin(), s.held.end(), work);
  if (held == s.held.end())
    return;
  s.held.erase(held);
  s.granted -= work->granted();
  s.tasks_done += work->ran;
  if (st.setup->max_tasks != 0 && s.tasks_done >= st.setup->max_tasks && s.held.empty() &&
      st.current != mode::terminating) {
    self->send_exit(s.handle, caf::exit_reason::user_shutdown);
    spawn_worker(self, index);
    st.setup->slots->replaced(index);
  }
  pump(st);
  stop_if_idle(self);
}

/// Chunks [first, last) of `job` go back to the backlog to run elsewhere, or fail when the pool
/// is terminating.
void requeue(dispatch_table& st, const job_ptr& job, std::size_t first, std::size_t last,
             std::size_t attempts) {
  if (first >= last)
    return;
  if (st.current == mode::terminating)
    fail_chunks(*job, first, last,
                closed_error("the pool was terminated before this work started"));
  else
    st.backlog.push_front({job, first, last, attempts});
}

/// A slot's worker is gone, whatever its kind and however it went: its actor settled the chunks
/// it had started (worker_driver), and what its held leases never started runs elsewhere
/// (lost_work.hpp). A local worker is replaced; a node's slot stays empty, so indices stay valid.
void on_down(dispatcher_self self, const caf::down_msg& down) {
  auto& st = table_of(self);
  auto s = std::find_if(st.slots.begin(), st.slots.end(),
                        [&](const slot_state& x) { return x.handle.address() == down.source; });
  if (s == st.slots.end())
    return; // a worker retired under max_tasks_per_worker
  for (auto& held : s->held)
    run_unstarted_elsewhere(
      *held, [&st](const job_ptr& job, std::size_t first, std::size_t last, std::size_t attempts) {
        requeue(st, job, first, last, attempts);
      });
  s->held.clear();
  s->granted = 0;
  s->handle = nullptr;
  if (st.workers_to_stop > 0) {
    if (--st.workers_to_stop == 0)
      self->quit();
    return;
  }
  if (s->remote) {
    s->gone = true;
    st.setup->nodes->fetch_sub(1);
  } else if (st.current == mode::terminating) {
    s->gone = true;
  } else {
    const auto index = static_cast<std::size_t>(s - st.slots.begin());
    spawn_worker(self, index);
    st.setup->slots->replaced(index);
  }
  pump(st);
  stop_if_idle(self);
}

void on_submit(dispatch_table& st, job_ptr job) {
  if (st.current != mode::running) {
    fail_chunks(*job, 0, job->chunk_count(),
                closed_error("the pool was closed before the work started"));
    return;
  }
  const auto chunks = job->chunk_count();
  st.backlog.push_back({std::move(job), 0, chunks});
  pump(st);
}

/// A stream was dropped: what of it has not started is abandoned.
void on_cancel(dispatcher_self self, const job_ptr& job) {
  auto& st = table_of(self);
  const auto why = closed_error("the stream was dropped before this item started");
  std::erase_if(st.backlog, [&](const queued_job& queued) {
    if (queued.job != job)
      return false;
    fail_chunks(*job, queued.next_chunk, queued.end_chunk, why);
    return true;
  });
  fail_unstarted_held(st, &job, why);
  stop_if_idle(self);
}

/// A node from another host joined: it gets a slot of its own after the local ones.
void on_node_joined(dispatcher_self self, std::shared_ptr<worker_link> node) {
  auto& st = table_of(self);
  if (st.current != mode::running)
    return; // dropping the link closes the connection: the node exits
  if (!st.setup->process->context_values.empty()) {
    std::cerr << "troupe: refused worker " << node->label()
              << ": this pool's contexts are values, one per local worker; nodes need a "
                 "TROUPE_CONTEXT_FACTORY"
              << std::endl;
    return;
  }
  st.slots.emplace_back();
  st.slots.back().remote = true;
  st.setup->nodes->fetch_add(1);
  auto* link = node.get();
  spawn_worker(self, st.slots.size() - 1, std::move(node));
  // A node lost while idle leaves at once, rather than when next offered work: its worker
  // actor is told to go (weakly held: the worker holds the link), and its slot goes with it.
  link->on_lost([worker = caf::actor_cast<caf::actor_addr>(st.slots.back().handle)] {
    if (auto handle = caf::actor_cast<caf::actor>(worker))
      caf::anon_send_exit(handle, caf::exit_reason::user_shutdown);
  });
  pump(st);
}

void on_close(dispatcher_self self) {
  auto& st = table_of(self);
  if (st.current != mode::running)
    return;
  st.current = mode::closing;
  // Streams must finish without their consumers, or join() would wait on them.
  for (auto& queued : st.backlog)
    queued.job->lift_limit();
  pump(st);
  stop_if_idle(self);
}

/// Stops now: what has not started fails with `why`; process workers are killed.
void on_terminate(dispatcher_self self, const std::exception_ptr& why) {
  auto& st = table_of(self);
  st.current = mode::terminating;
  st.setup->terminating->store(true);
  for (auto& queued : st.backlog)
    fail_chunks(*queued.job, queued.next_chunk, queued.end_chunk, why);
  st.backlog.clear();
  fail_unstarted_held(st, nullptr, why);
  stop_if_idle(self);
}

/// Runs a handler. Should the dispatcher's own bookkeeping ever throw (memory, a bug), nothing
/// it holds may wait for ever: the pool stops and everything not yet done fails.
template <class Handler>
void dispatch(dispatcher_self self, Handler&& handler) noexcept {
  handling guard{self};
  table_lock lock{table_of(self)};
  try {
    handler();
  } catch (...) {
    const auto why = as_worker_failure(std::current_exception(), "the pool's dispatcher");
    try {
      std::rethrow_exception(why);
    } catch (const std::exception& e) {
      std::cerr << "troupe: " << e.what() << "; the pool stops" << std::endl;
    }
    on_terminate(self, why);
  }
}

dispatcher_actor::behavior_type dispatcher(dispatcher_self self,
                                           std::shared_ptr<dispatch_table> table,
                                           std::shared_ptr<stop_signal> stopped) {
  tsan_acquire(table.get()); // released by spawn_dispatcher
  handling guard{self};
  self->state.table = std::move(table);
  {
    // Callers may have submitted already: their jobs wait in the backlog for the slots.
    table_lock lock{table_of(self)};
    auto& st = table_of(self);
    st.slots.resize(st.setup->workers);
    for (std::size_t i = 0; i < st.slots.size(); ++i)
      spawn_worker(self, i);
    pump(st);
  }
  self->set_down_handler(
    [self](caf::down_msg& down) { dispatch(self, [&] { on_down(self, down); }); });
  // join() waits on this, whatever way the dispatcher ends.
  self->attach_functor([stopped] { stopped->set(); });
  return {
    [self](submit_atom, job_ptr& job) {
      dispatch(self, [&] {
        --table_of(self).queued_submits;
        on_submit(table_of(self), std::move(job));
      });
    },
    [self](cancel_atom, job_ptr& job) { dispatch(self, [&] { on_cancel(self, job); }); },
    [self](wake_atom) { dispatch(self, [&] { pump(table_of(self)); }); },
    [self](join_atom, std::shared_ptr<worker_link>& node) {
      dispatch(self, [&] { on_node_joined(self, std::move(node)); });
    },
    [self](give_back_atom, job_ptr& job, std::size_t first, std::size_t last,
           std::size_t attempts) {
      dispatch(self, [&] {
        requeue(table_of(self), job, first, last, attempts);
        pump(table_of(self));
      });
    },
    [self](done_atom, std::size_t index, std::size_t generation, lease_ptr& work) {
      dispatch(self, [&] { on_done(self, index, generation, work); });
    },
    [self](place_atom, std::size_t slot) {
      dispatch(self, [&] {
        auto& slots = table_of(self).slots;
        if (slot < slots.size() && slots[slot].handle)
          send_from(self, slots[slot].handle, place_atom::value);
        // Otherwise the slot is being replaced, and its next actor hands the actor over.
      });
    },
    [self](close_atom) { dispatch(self, [&] { on_close(self); }); },
    [self](terminate_atom) {
      dispatch(self, [&] {
        on_terminate(self, closed_error("the pool was terminated before this work started"));
      });
    },
  };
}

} // namespace

direct_submit submit_directly(dispatch_table& table, const job_ptr& job) {
  // Never waits for the lock: a caller finding it taken (by the dispatcher, or by this thread,
  // in a callback run under it) sends its job instead. So no caller waits behind another, and a
  // callback under the lock that submits, or closes the pool, cannot deadlock.
  std::optional<table_lock> lock;
  if (!holding_a_table)
    lock.emplace(table, std::try_to_lock);
  if (!lock || !lock->held() || table.queued_submits.load() != 0 ||
      table.current != mode::running) {
    ++table.queued_submits; // the dispatcher fails it if it is stopping, as before
    return direct_submit::refused;
  }
  // Throws before anything changed (the caller sees it), or never.
  table.backlog.push_back({job, 0, job->chunk_count()});
  try {
    pump(table);
  } catch (...) { // whatever it was: the pool stops, as when a handler's bookkeeping throws
    report_escaped_exception("the pool's dispatcher, handing a caller's job to its slots");
    return direct_submit::broken;
  }
  return direct_submit::taken;
}

void release_slots(dispatch_table& table) noexcept {
  table_lock lock{table};
  table.slots.clear();
  table.backlog.clear();
}

pool_dispatcher spawn_dispatcher(caf::actor_system& system, worker_setup setup,
                                 std::shared_ptr<stop_signal> stopped) {
  auto table = std::make_shared<dispatch_table>();
  table->setup = std::make_shared<const worker_setup>(std::move(setup));
  tsan_release(table.get());
  auto actor = system.spawn(dispatcher, table, std::move(stopped));
  return {std::move(actor), std::move(table)};
}

} // namespace troupe::detail
