// A user's actor as troupe runs it: a detached CAF actor that owns the object and runs the calls
// its mailbox brings, one at a time; in front of it, the bound on that mailbox, and the rules of
// stopping (stop(), the last handle gone, the runtime stopping).
#include "troupe/actors/actor.hpp"

#include "troupe/actors/annotated.hpp"
#include "troupe/actors/detail/idle_cores.hpp"
#include "troupe/actors/local_actor.hpp"
#include "troupe/actors/mailbox_bound.hpp"
#include "troupe/actors/runtime_state.hpp"
#include "troupe/actors/travelled_actors.hpp"

#include <caf/all.hpp>

#include <atomic>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <shared_mutex>
#include <thread>

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<troupe::detail::actor_call>)

namespace troupe::detail {

namespace {

using call_ptr = std::shared_ptr<actor_call>;
using quit_atom = caf::atom_constant<caf::atom("quit")>;

struct actor_shared {
  actor_shared(std::string actor, const actor_options& options)
    : name(std::make_shared<const std::string>(std::move(actor))),
      bound(options.max_mailbox, options.mailbox_timeout) {}
  const std::shared_ptr<const std::string> name;
  mailbox_bound bound;
  std::atomic<bool> stopped{false};
  std::mutex cause_mutex;
  std::string cause; // why it stopped, once it has
};

struct user_actor_state {
  std::shared_ptr<actor_shared> shared;
  void* object = nullptr;
  void (*destroy)(void*) = nullptr;
  std::shared_ptr<void> owner; // or this owns the object (one made from bytes)
  ~user_actor_state() {
    if (object != nullptr && destroy != nullptr)
      destroy(object); // on the actor's own thread, or the system's as it shuts down
  }
  static inline const char* name = "troupe.actor";
};

std::exception_ptr stopped_error(actor_shared& shared) {
  std::lock_guard guard{shared.cause_mutex};
  return std::make_exception_ptr(actor_stopped("actor '" + *shared.name + "' was stopped (" +
                                               shared.cause + ") before this call ran"));
}

/// A caller that waits for each answer sends its next call within microseconds: watching the
/// mailbox that long after a call saves this thread a sleep and the caller a wake-up (a call
/// took 10 us here without it). Only while a core is idle for it (idle_cores.hpp): on a busy
/// machine the actor's thread sleeps at once and the next call wakes it.
template <class Self>
void linger(Self* self) {
  (void)spin_while_idle([self] { return !self->mailbox().empty(); }, std::chrono::microseconds{30});
}

caf::behavior user_actor(caf::stateful_actor<user_actor_state>* self,
                         std::shared_ptr<actor_shared> shared, void* object, void (*destroy)(void*),
                         std::shared_ptr<void> owner,
                         const std::shared_ptr<detached_threads>& threads) {
  detached_threads::count_this_thread(threads);
  tsan_acquire(shared.get());
  self->state.shared = std::move(shared);
  self->state.object = object;
  self->state.destroy = destroy;
  self->state.owner = std::move(owner);
  return {
    [self](call_ptr& call) {
      const handling scope{self};
      auto& st = self->state;
      st.shared->bound.release();
      if (st.shared->stopped.load()) {
        call->fail(stopped_error(*st.shared));
        return;
      }
      call->run(st.object);
      call.reset(); // its arguments go now, not when the next message comes
      linger(self);
    },
    [self](quit_atom) {
      const handling scope{self};
      self->quit();
    },
  };
}

/// An actor in this process: its CAF actor on a thread of its own, and the bound on its mailbox.
class local_actor final : public actor_core, public service {
public:
  local_actor(runtime_state& rt, const actor_options& options, void* object, void (*destroy)(void*),
              std::shared_ptr<void> owner)
    : shared_(
        std::make_shared<actor_shared>(options.name.empty() ? "actor" : options.name, options)),
      registry_(rt.services) {
    if (options.max_mailbox == 0)
      throw invalid_argument("actor '" + *shared_->name + "': max_mailbox must be at least 1");
    registry_->add(this);
    tsan_release(shared_.get());
    handle_ = rt.system->spawn<caf::detached>(user_actor, shared_, object, destroy, owner,
                                              rt.actor_threads);
  }

  /// The last handle is gone: what the mailbox holds still runs, then the actor stops.
  ~local_actor() override {
    if (registry_->remove(this))
      end("its last handle was dropped", false);
  }

  void shutdown() noexcept override { end("its runtime stopped", true); }

  void enqueue(call_ptr call) override {
    if (shared_->stopped.load())
      std::rethrow_exception(stopped_error(*shared_));
    if (!shared_->bound.reserve(shared_->stopped)) {
      if (shared_->stopped.load())
        std::rethrow_exception(stopped_error(*shared_));
      throw mailbox_full(*shared_->name, shared_->bound);
    }
    std::shared_lock guard{mutex_};
    if (!handle_) {
      shared_->bound.release();
      std::rethrow_exception(stopped_error(*shared_));
    }
    send_from_outside(handle_, std::move(call));
  }

  bool alive() const noexcept override { return !shared_->stopped.load(); }

  void stop() noexcept override { end("stop() was called", true); }

  const std::shared_ptr<const std::string>& name() const noexcept override { return shared_->name; }

private:
  /// Stops taking calls. `fail_waiting`: the calls in the mailbox fail rather than run.
  void end(const char* why, bool fail_waiting) noexcept {
    std::unique_lock guard{mutex_};
    if (!handle_)
      return;
    if (fail_waiting) {
      std::lock_guard cause{shared_->cause_mutex};
      shared_->cause = why;
      shared_->stopped.store(true);
    }
    send_from_outside(handle_, quit_atom::value); // after every call already sent
    handle_ = nullptr; // the system may go away next: hold no handle into it
    guard.unlock();
    if (fail_waiting)
      shared_->bound.wake_all();
  }

  std::shared_ptr<actor_shared> shared_;
  std::shared_ptr<service_registry> registry_;
  std::shared_mutex mutex_; // orders calls before the quit that follows them
  caf::actor handle_;
};

} // namespace

std::shared_ptr<actor_core> start_actor(runtime& rt, actor_options options, void* object,
                                        void (*destroy)(void*)) {
  return std::make_shared<local_actor>(runtime_state_of(rt), options, object, destroy, nullptr);
}

std::shared_ptr<actor_core> start_local_actor(runtime_state& rt, const actor_options& options,
                                              std::shared_ptr<void> object) {
  void* raw = object.get();
  return std::make_shared<local_actor>(rt, options, raw, nullptr, std::move(object));
}

namespace {
std::atomic<actor_resolver> installed_resolver{nullptr};
} // namespace

void set_actor_resolver(actor_resolver resolver) noexcept { installed_resolver.store(resolver); }

std::shared_ptr<actor_core> resolve_actor(const actor_address& address) {
  if (address.process != 0)
    return resolve_travelled(address);
  auto* resolver = installed_resolver.load();
  if (resolver == nullptr)
    throw serialization_error("a handle to actor '" + address.name + "' of group '" +
                              address.group + "' arrived in a process that is in no world");
  return resolver(address);
}

void cannot_travel(const std::string& actor) {
  throw serialization_error("the handle of actor '" + actor +
                            "' cannot travel: its type is not registered with TROUPE_ACTOR, so "
                            "no other process could call it");
}

std::exception_ptr stopped_before_running(const std::string& actor) noexcept {
  return std::make_exception_ptr(
    actor_stopped("actor '" + actor + "' stopped before this call ran"));
}

} // namespace troupe::detail
