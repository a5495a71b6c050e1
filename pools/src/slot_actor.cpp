// A process pool's slot actor: one per worker slot, on a thread of its own. It runs the leases
// the dispatcher gives it by driving a worker process or a node (worker_driver), and reports
// each done; when its worker is lost it quits, and the dispatcher's on_down replaces it.
#include "slot_actor.hpp"

#include "lost_work.hpp"
#include "process/worker_driver.hpp"

#include "troupe/actors/async_result.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/actors/travelled_actors.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <string>

namespace troupe::detail {

namespace {

/// How often an idle process worker looks for calls its process relays (only once a handle to
/// an actor of this process has travelled).
constexpr auto relay_watch = std::chrono::milliseconds{20};

struct worker_state {
  // Not an aggregate: CAF makes a state from the actor's pointer whenever it can, and C++20 would
  // let an aggregate take that pointer as its first member (here, `true`).
  worker_state() = default;

  bool watching_relays = false; // a relays_atom is on its way to this actor
  std::optional<slot_meter> meter;
  // The worker process (or node) this actor drives.
  std::optional<worker_driver> process;
  static inline const char* name = "troupe.worker";
};

using worker_self = worker_actor::stateful_pointer<worker_state>;

/// Runs a lease; false if the worker is lost and its slot must go. No exception leaves here:
/// one that escapes the machinery fails everything the worker held with a typed error.
bool run_guarded(worker_self self, lease& work) noexcept {
  auto& st = self->state;
  try {
    return st.process->run(work);
  } catch (...) {
    const auto why = as_worker_failure(std::current_exception(), st.process->label());
    st.process->fail_all(work, why);
    return false;
  }
}

/// Between leases, looks again for relayed calls in a while, once handles have travelled.
void watch_relays(worker_self self) {
  auto& st = self->state;
  if (st.watching_relays || !any_travelled())
    return;
  st.watching_relays = true;
  tsan_release(self);
  self->delayed_send(self, relay_watch, relays_atom::value);
}

/// Hands the slot's process the actors placed in it; false if the process is lost.
bool place_guarded(worker_driver& driver) noexcept {
  try {
    return driver.place_actors();
  } catch (...) {
    report_escaped_exception(std::string{"placing actors in "} + driver.label());
    return false;
  }
}

worker_actor::behavior_type slot_actor(worker_self self, dispatcher_actor dispatcher,
                                       std::size_t slot, std::size_t generation,
                                       std::shared_ptr<const worker_setup> setup,
                                       std::shared_ptr<worker_link> node) {
  tsan_acquire(setup.get()); // released by spawn_worker
  detached_threads::count_this_thread(setup->actor_threads);
  handling guard{self};
  self->state.meter.emplace(setup->slots, slot);
  self->state.process.emplace(
    slot, setup->process, std::move(node), *setup->terminating, *self->state.meter,
    [self, dispatcher](const job_ptr& job, std::size_t first, std::size_t last,
                       std::size_t attempts) {
      send_from(self, dispatcher, give_back_atom::value, job, first, last, attempts);
    },
    setup->placements);
  // Actors placed in this slot live in its process: a new one starts it now, not at its first
  // lease.
  if (setup->placements->pending(slot))
    send_from(self, caf::actor_cast<worker_actor>(self), place_atom::value);
  return {
    [=](lease_ptr& work) {
      handling guard{self};
      self->state.meter->begin();
      if (!run_guarded(self, *work)) {
        self->quit(); // the dispatcher's on_down replaces the slot
        return;
      }
      send_from(self, dispatcher, done_atom::value, slot, generation, std::move(work));
      watch_relays(self);
    },
    [=](relays_atom) {
      handling guard{self};
      self->state.watching_relays = false;
      bool alive = true;
      try {
        alive = self->state.process->relay_between_leases();
      } catch (...) {
        report_escaped_exception("relaying calls from " + self->state.process->label());
      }
      if (!alive) {
        self->quit(); // its process is lost: the dispatcher's on_down replaces the slot
        return;
      }
      watch_relays(self);
    },
    [=](place_atom) {
      handling guard{self};
      if (!place_guarded(*self->state.process)) {
        self->quit(); // its process is lost: the dispatcher's on_down replaces the slot
        return;
      }
      watch_relays(self);
    },
  };
}

} // namespace

worker_actor spawn_slot_actor(caf::actor_system& system, dispatcher_actor dispatcher,
                              std::size_t slot, std::size_t generation,
                              std::shared_ptr<const worker_setup> setup,
                              std::shared_ptr<worker_link> node) {
  return system.spawn<caf::detached>(slot_actor, std::move(dispatcher), slot, generation,
                                     std::move(setup), std::move(node));
}

} // namespace troupe::detail
