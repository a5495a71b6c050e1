// troupe::actor<T>: an object of yours that lives on its own thread of control and runs one call
// at a time (Ray's actors, CAF's and Akka's), so its class needs no locks.
//
//   struct counter {
//     explicit counter(int start) : n(start) {}
//     int add(int k) { return n += k; }
//     int get() const { return n; }
//     int n;
//   };
//
//   auto c = troupe::spawn<counter>(rt, 10);             // constructed here, runs on its own
//   int v = c.call(&counter::add, 5).get();              // troupe::async_result<int>: 15
//   c.tell(&counter::add, 1);                            // fire and forget
//   pool.apply_async([c](int k) { c.tell(&counter::add, k); }, 2);   // handles are copyable
//
// Calls run in the order each thread sent them; an exception a call throws comes back from its
// result's get() as itself. A tell's exception has no one to receive it and is logged.
// The mailbox is bounded (actor_options::max_mailbox): a call or tell that finds it full waits
// for room, up to mailbox_timeout, then throws capacity_error, so memory never grows with a fast
// sender. stop() lets the call running finish; the calls waiting fail with actor_stopped, as
// does every later call. The actor stops too when its last handle is gone (after running what
// its mailbox holds) and when its runtime stops (what was waiting fails). Each actor has a
// thread of its own, so a slow call holds up no other actor or pool.
//
// An actor can live in another process too: process_pool::spawn makes one in a worker process
// of its own, which troupe starts again when it dies (restart_policy). Its type must then be
// registered with TROUPE_ACTOR (troupe/actors/actor_type.hpp), and calls travel as bytes.
#pragma once

#include "troupe/actors/actor_type.hpp"
#include "troupe/actors/async_result.hpp"
#include "troupe/actors/detail/typed_actor_call.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/actors/runtime.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe {

/// What troupe does when the process an actor lives in dies (a worker killed, a member lost).
/// Actors in this process die with their caller, and never restart.
struct restart_policy {
  /// Restarts allowed within `within`; past that the actor is gone, and calls fail with
  /// actor_stopped naming the cause. 0: the actor never restarts.
  std::size_t max_restarts = 0;
  /// The window `max_restarts` counts in.
  std::chrono::milliseconds within{60'000};
  /// How many times a call marked idempotent (call(troupe::idempotent, ...)) that was running or
  /// waiting in the dead process is sent again to its replacement; other calls that were there
  /// fail with worker_lost.
  std::size_t max_call_retries = 0;
  /// World actors: the members a restart may go to, in this order (the first still there that
  /// makes it); empty: the group's members after the lost one, in turn. An actor in a worker
  /// process restarts in a new one, or in its slot's: for it this must stay empty.
  std::vector<std::string> members;
};

/// What on_restart is told: the actor, how many times it has restarted, and why this time.
struct actor_restart {
  /// The actor's name.
  std::string actor;
  /// Restarts so far, this one included.
  std::size_t restarts = 0;
  /// Why it was made again (the process's death, the member's loss).
  std::string cause;
};

/// How an actor is made: its name, its mailbox's bound, and its restart policy.
struct actor_options {
  /// What errors and logs call the actor ("actor" when empty).
  std::string name;
  /// Calls (and tells) waiting in the mailbox at most, the one running not counted.
  std::size_t max_mailbox = 1024;
  /// How long a call or tell waits for room in a full mailbox before capacity_error.
  std::chrono::milliseconds mailbox_timeout{10'000};
  /// For an actor in another process: whether, and how often, it is made again when it dies.
  restart_policy restart;
  /// Called (on a thread of troupe's) after each restart, before calls reach the new actor;
  /// what it throws is logged.
  std::function<void(const actor_restart&)> on_restart;
};

/// Marks a call as safe to run twice: `a.call(troupe::idempotent, &T::get)` is sent again to a
/// restarted actor (restart_policy::max_call_retries) rather than failing with worker_lost.
struct idempotent_t {
  explicit idempotent_t() = default;
};
inline constexpr idempotent_t idempotent{};

namespace detail {

/// Starts an actor in this process for `object` (owned from here on, destroyed by `destroy` on
/// the actor's thread when it stops) on `rt`'s actor system.
std::shared_ptr<actor_core> start_actor(runtime& rt, actor_options options, void* object,
                                        void (*destroy)(void*));

struct actor_access;

} // namespace detail

/// A handle to an actor: an object of yours running one call at a time on a thread of its own, in
/// this process, a worker process, or a world member (Ray's actors, CAF's and Akka's). Copyable; it
/// travels as a task's argument or result.
template <class T>
class actor {
public:
  /// An empty handle, to be assigned (decoding makes one first). Calls, tells and saving
  /// through it (or through a handle moved from) throw state_error; alive() is false, stop()
  /// does nothing and name() is empty.
  actor() = default;

  /// Calls `method` on the actor's object with `args` (converted to its parameters' types); the
  /// result (a copy, if the method returns a reference) is ready when the call has run.
  template <class R, class... Params, class... Args>
  async_result<std::remove_cvref_t<R>> call(R (T::*method)(Params...), Args&&... args) const {
    return ask(false, method, std::forward<Args>(args)...);
  }
  /// The same, for a const method.
  template <class R, class... Params, class... Args>
  async_result<std::remove_cvref_t<R>> call(R (T::*method)(Params...) const, Args&&... args) const {
    return ask(false, method, std::forward<Args>(args)...);
  }
  /// A call that may run twice: sent again to a restarted actor (restart_policy).
  template <class R, class... Params, class... Args>
  async_result<std::remove_cvref_t<R>> call(idempotent_t, R (T::*method)(Params...),
                                            Args&&... args) const {
    return ask(true, method, std::forward<Args>(args)...);
  }
  /// The same, for a const method.
  template <class R, class... Params, class... Args>
  async_result<std::remove_cvref_t<R>> call(idempotent_t, R (T::*method)(Params...) const,
                                            Args&&... args) const {
    return ask(true, method, std::forward<Args>(args)...);
  }

  /// Calls `method` without waiting for, or receiving, its result.
  template <class R, class... Params, class... Args>
  void tell(R (T::*method)(Params...), Args&&... args) const {
    detail::send_actor_call<T>(core(), false, method, nullptr, std::forward<Args>(args)...);
  }
  /// The same, for a const method.
  template <class R, class... Params, class... Args>
  void tell(R (T::*method)(Params...) const, Args&&... args) const {
    detail::send_actor_call<T>(core(), false, method, nullptr, std::forward<Args>(args)...);
  }

  /// Whether the actor still takes calls.
  bool alive() const noexcept { return core_ && core_->alive(); }
  /// Stops the actor: the call running finishes, the others fail with actor_stopped.
  void stop() const noexcept {
    if (core_)
      core_->stop();
  }
  /// The actor's name (actor_options::name); empty for an empty handle.
  const std::string& name() const noexcept {
    static const std::string none;
    return core_ ? *core_->name() : none;
  }

  /// A handle travels as a task's argument or result, and calls through the copy reach the same
  /// actor: a world actor's from any member; another's (of a registered type) from the worker
  /// processes of its process's pools, which relay them back. serialization_error for a type
  /// TROUPE_ACTOR does not register, or (when decoded) in a process that cannot reach it.
  template <class Archive>
  void save(Archive& ar) const {
    (void)core(); // state_error for an empty handle
    ar(detail::travelling_address<T>(core_));
  }
  template <class Archive>
  void load(Archive& ar) {
    detail::actor_address address;
    ar(address);
    core_ = detail::resolve_typed_actor<T>(address);
  }

private:
  friend struct detail::actor_access;

  explicit actor(std::shared_ptr<detail::actor_core> core) : core_(std::move(core)) {}

  /// Where calls go; state_error for an empty handle.
  detail::actor_core& core() const {
    if (!core_)
      detail::throw_empty_handle("troupe::actor", "a call, tell or save");
    return *core_;
  }

  template <class Method, class... Args>
  auto ask(bool idempotent, Method method, Args&&... args) const {
    using result_type = typename detail::method_traits<Method>::result;
    auto result = std::make_shared<detail::result_state<result_type>>();
    detail::send_actor_call<T>(core(), idempotent, method, result, std::forward<Args>(args)...);
    return async_result<result_type>{std::move(result)};
  }

  std::shared_ptr<detail::actor_core> core_;
};

namespace detail {

/// How the modules that make actors elsewhere (pools, world) hand out handles to them.
struct actor_access {
  template <class T>
  static actor<T> make(std::shared_ptr<actor_core> core) {
    return actor<T>{std::move(core)};
  }
};

} // namespace detail

/// Makes a T from `args` here (its constructor's exception comes out of spawn) and starts it as
/// an actor on `rt`.
template <class T, class... Args>
actor<T> spawn(runtime& rt, actor_options options, Args&&... args) {
  auto object = std::make_unique<T>(std::forward<Args>(args)...);
  auto core = detail::start_actor(rt, std::move(options), object.get(),
                                  [](void* p) { delete static_cast<T*>(p); });
  object.release(); // the actor owns it now
  return detail::actor_access::make<T>(std::move(core));
}

template <class T, class... Args>
actor<T> spawn(runtime& rt, Args&&... args) {
  return spawn<T>(rt, actor_options{}, std::forward<Args>(args)...);
}

} // namespace troupe
