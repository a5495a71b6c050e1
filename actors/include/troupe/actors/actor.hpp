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
#include "troupe/actors/error.hpp"
#include "troupe/actors/remote_exception.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/task.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
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
  std::string actor;
  std::size_t restarts = 0;
  std::string cause;
};

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

/// One call to an actor. Destroyed unrun (its actor stopped first), it settles its result with
/// actor_stopped: no caller waits for ever.
class actor_call {
public:
  virtual ~actor_call() = default;
  /// Runs the call on the actor's object, in this process, and settles its result.
  virtual void run(void* object) noexcept = 0;
  /// Settles the result with `why` without running.
  virtual void fail(std::exception_ptr why) noexcept = 0;
  /// For an actor in another process: the registered method's key, and the arguments as they
  /// travel (one call, as encode_calls makes it). invalid_argument or serialization_error if
  /// they cannot travel.
  virtual std::string method_key() const = 0;
  virtual std::vector<std::byte> encode() const = 0;
  /// Settles the result from the outcomes of the call's chunk, run at `where`.
  virtual void settle(std::span<const std::byte> outcomes, const std::string& where) noexcept = 0;

  bool idempotent = false;
  std::size_t retries = 0; // times it was sent again after its actor's process died
};

/// Where a handle that travels finds its actor: a world actor's group, name and registered
/// type, the member (world rank) it runs on, which incarnation of it, whether its spawner makes
/// it again when that member is lost (else a handle need not wait for that), and how often an
/// idempotent call may go again then. An actor outside a world (`process` set) is found by its
/// number in the process that holds its mailbox, from the worker processes of that process's
/// pools, whose calls it relays (pools/src/process/relay_*.cpp).
struct actor_address {
  std::string group, name, type;
  std::int32_t rank = -1;
  std::uint64_t incarnation = 0;
  bool restartable = false;
  std::uint32_t max_call_retries = 0;
  std::int32_t process = 0; // the pid holding the mailbox of an actor outside a world
  std::uint64_t number = 0; // its number there

  template <class Archive>
  void serialize(Archive& ar) {
    ar(group, name, type, rank, incarnation, restartable, max_call_retries, process, number);
  }
};

/// Where an actor's calls go: its thread in this process, or another process.
class actor_core {
public:
  virtual ~actor_core() = default;
  /// Puts `call` in the actor's mailbox, waiting for room (capacity_error past the timeout);
  /// actor_stopped if the actor no longer takes calls.
  virtual void enqueue(std::shared_ptr<actor_call> call) = 0;
  virtual bool alive() const noexcept = 0;
  virtual void stop() noexcept = 0;
  /// Shared with the calls, which keep it (a count up, not a copy of the text).
  virtual const std::shared_ptr<const std::string>& name() const noexcept = 0;
  /// Where a world actor is reached from another process; none for an actor outside a world
  /// (whose handle, when it travels, is numbered in its process: travelled_address).
  virtual std::optional<actor_address> address() const { return std::nullopt; }
};

/// A handle's core from its address, in the process that decodes it (the world installs how
/// for world actors, a pool's worker process for actors of the process that started it:
/// serialization_error where none can reach it).
std::shared_ptr<actor_core> resolve_actor(const actor_address& address);
using actor_resolver = std::shared_ptr<actor_core> (*)(const actor_address& address);
/// Installs (or, with nullptr, removes) the resolver; the world does, for its lifetime.
void set_actor_resolver(actor_resolver resolver) noexcept;
/// The same for actors outside a world, in a pool's worker process (installed for its life).
void set_relay_resolver(actor_resolver resolver) noexcept;
/// The address of an actor outside a world, of registered type `type`, whose handle travels:
/// numbered in this process (weakly: the number does not keep it alive).
actor_address travelled_address(const std::shared_ptr<actor_core>& core, const std::string& type);
/// What saving a handle without an address throws.
[[noreturn]] void cannot_travel(const std::string& actor);

/// Starts an actor in this process for `object` (owned from here on, destroyed by `destroy` on
/// the actor's thread when it stops) on `rt`'s actor system.
std::shared_ptr<actor_core> start_actor(runtime& rt, actor_options options, void* object,
                                        void (*destroy)(void*));
/// The error of a call that never ran because its actor stopped.
std::exception_ptr stopped_before_running(const std::string& actor) noexcept;

template <class Method>
struct method_traits;
template <class T, class R, class... P>
struct method_traits<R (T::*)(P...)> {
  using result = std::remove_cvref_t<R>;
  using args = std::tuple<std::decay_t<P>...>;
};
template <class T, class R, class... P>
struct method_traits<R (T::*)(P...) const> : method_traits<R (T::*)(P...)> {};

/// A call of `Method` on a T, its arguments held as the method's parameter types, and the
/// result it settles (none for a tell).
template <class T, class Method>
class typed_actor_call final : public actor_call {
  using R = typename method_traits<Method>::result;
  using args_type = typename method_traits<Method>::args;

public:
  template <class... A>
  typed_actor_call(Method method, std::shared_ptr<result_state<R>> result,
                   std::shared_ptr<const std::string> actor, A&&... args)
    : method_(method), args_(std::forward<A>(args)...), result_(std::move(result)),
      actor_(std::move(actor)) {}
  ~typed_actor_call() override {
    if (!settled_ && result_)
      result_->set_error(stopped_before_running(*actor_));
  }

  void run(void* object) noexcept override {
    settled_ = true;
    auto& self = *static_cast<T*>(object);
    try {
      if constexpr (std::is_void_v<R>) {
        std::apply([&](auto&... args) { (self.*method_)(std::move(args)...); }, args_);
        if (result_)
          result_->set_value({});
      } else {
        auto value = std::apply(
          [&](auto&... args) -> R { return (self.*method_)(std::move(args)...); }, args_);
        if (result_)
          result_->set_value(std::move(value));
      }
    } catch (...) {
      if (result_)
        result_->set_error(std::current_exception());
      else
        report_escaped_exception("a tell to actor '" + *actor_ + "'");
    }
  }

  void fail(std::exception_ptr why) noexcept override {
    settled_ = true;
    if (result_)
      result_->set_error(std::move(why));
  }

  std::string method_key() const override {
    if constexpr (registered_actor<T>)
      return detail::method_key<T>(method_);
    else
      throw invalid_argument("actor '" + *actor_ + "' lives in another process, but its type is " +
                             "not registered with TROUPE_ACTOR");
  }

  std::vector<std::byte> encode() const override {
    if constexpr (all_serializable<args_type>)
      return encode_calls(std::vector<args_type>{args_});
    else
      throw serialization_error("a call to actor '" + *actor_ +
                                "' cannot travel: a parameter of its method is not serializable");
  }

  void settle(std::span<const std::byte> outcomes, const std::string& where) noexcept override {
    settled_ = true;
    try {
      if constexpr (serializable<wire_value<R>>) {
        auto decoded = deserialize<chunk_outcomes<R>>(outcomes);
        if (!decoded.second.empty()) {
          auto why = rebuild_exception(decoded.second[0].type, decoded.second[0].message, where);
          if (!result_)
            std::rethrow_exception(why); // reported below
          result_->set_error(std::move(why));
        } else if (decoded.first.size() != 1) {
          throw serialization_error("the answer of actor '" + *actor_ + "' at " + where +
                                    " holds " + std::to_string(decoded.first.size()) +
                                    " results for one call");
        } else if (result_) {
          if constexpr (std::is_void_v<R>)
            result_->set_value({});
          else
            result_->set_value(std::move(decoded.first[0]));
        }
      } else {
        throw serialization_error("actor '" + *actor_ + "': the method's result cannot travel");
      }
    } catch (...) {
      if (result_)
        result_->set_error(std::current_exception());
      else
        report_escaped_exception("a tell to actor '" + *actor_ + "' at " + where);
    }
  }

private:
  Method method_;
  args_type args_;
  std::shared_ptr<result_state<R>> result_;
  std::shared_ptr<const std::string> actor_;
  bool settled_ = false;
};

struct actor_access;

} // namespace detail

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
  template <class R, class... Params, class... Args>
  async_result<std::remove_cvref_t<R>> call(idempotent_t, R (T::*method)(Params...) const,
                                            Args&&... args) const {
    return ask(true, method, std::forward<Args>(args)...);
  }

  /// Calls `method` without waiting for, or receiving, its result.
  template <class R, class... Params, class... Args>
  void tell(R (T::*method)(Params...), Args&&... args) const {
    post(false, method, nullptr, std::forward<Args>(args)...);
  }
  template <class R, class... Params, class... Args>
  void tell(R (T::*method)(Params...) const, Args&&... args) const {
    post(false, method, nullptr, std::forward<Args>(args)...);
  }

  /// Whether the actor still takes calls.
  bool alive() const noexcept { return core_ && core_->alive(); }
  /// Stops the actor: the call running finishes, the others fail with actor_stopped.
  void stop() const noexcept {
    if (core_)
      core_->stop();
  }
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
    auto address = core().address();
    if (!address) {
      if constexpr (detail::registered_actor<T>)
        address = detail::travelled_address(core_, detail::actor_type_key<T>());
      if (!address)
        detail::cannot_travel(name());
    }
    ar(*address);
  }
  template <class Archive>
  void load(Archive& ar) {
    detail::actor_address address;
    ar(address);
    if constexpr (detail::registered_actor<T>)
      if (address.type != detail::actor_type_key<T>())
        throw serialization_error("a handle to actor '" + address.name + "' of type " +
                                  address.type + " was read as a handle to " +
                                  detail::actor_type_key<T>());
    core_ = detail::resolve_actor(address);
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
    post(idempotent, method, result, std::forward<Args>(args)...);
    return async_result<result_type>{std::move(result)};
  }

  template <class Method, class... Args>
  void
  post(bool idempotent, Method method,
       std::shared_ptr<detail::result_state<typename detail::method_traits<Method>::result>> result,
       Args&&... args) const {
    static_assert(std::is_constructible_v<typename detail::method_traits<Method>::args, Args&&...>,
                  "these arguments do not convert to the method's parameters");
    auto& to = core();
    auto call = std::make_shared<detail::typed_actor_call<T, Method>>(
      method, std::move(result), to.name(), std::forward<Args>(args)...);
    call->idempotent = idempotent;
    to.enqueue(std::move(call));
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
