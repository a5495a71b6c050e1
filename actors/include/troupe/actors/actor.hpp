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
#pragma once

#include "troupe/actors/async_result.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/actors/runtime.hpp"

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace troupe {

struct actor_options {
  /// What errors and logs call the actor ("actor" when empty).
  std::string name;
  /// Calls (and tells) waiting in the mailbox at most, the one running not counted.
  std::size_t max_mailbox = 1024;
  /// How long a call or tell waits for room in a full mailbox before capacity_error.
  std::chrono::milliseconds mailbox_timeout{10'000};
};

namespace detail {

class actor_core;

/// One call waiting in an actor's mailbox. Destroyed unrun (its actor stopped first), it
/// settles its result with actor_stopped: no caller waits for ever.
class actor_call {
public:
  virtual ~actor_call() = default;
  /// Runs the call on the actor's object and settles its result; nothing escapes.
  virtual void run(void* object) noexcept = 0;
  /// Settles the result with `why` without running.
  virtual void fail(std::exception_ptr why) noexcept = 0;
};

/// Starts an actor for `object` (owned from here on, destroyed by `destroy` on the actor's
/// thread when it stops) on `rt`'s actor system.
std::shared_ptr<actor_core> start_actor(runtime& rt, actor_options options, void* object,
                                        void (*destroy)(void*));
/// Puts `call` in the actor's mailbox, waiting for room (capacity_error past the timeout);
/// actor_stopped if the actor no longer takes calls.
void enqueue(actor_core& core, std::shared_ptr<actor_call> call);
bool alive(const actor_core& core) noexcept;
void stop(actor_core& core) noexcept;
const std::string& name_of(const actor_core& core) noexcept;
/// The same name, for calls to keep (one count up a call, not a copy of the text).
std::shared_ptr<const std::string> shared_name_of(const actor_core& core) noexcept;
/// The error of a call that never ran because its actor stopped.
std::exception_ptr stopped_before_running(const std::string& actor) noexcept;

/// A call of `Method` on a T with `Args`, and the result it settles (none for a tell).
template <class T, class R, class Method, class... Args>
class typed_actor_call final : public actor_call {
public:
  typed_actor_call(Method method, std::tuple<Args...> args, std::shared_ptr<result_state<R>> result,
                   std::shared_ptr<const std::string> actor)
    : method_(method), args_(std::move(args)), result_(std::move(result)),
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
        std::apply([&](Args&... args) { (self.*method_)(std::move(args)...); }, args_);
        if (result_)
          result_->set_value({});
      } else {
        auto value = std::apply(
          [&](Args&... args) -> R { return (self.*method_)(std::move(args)...); }, args_);
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

private:
  Method method_;
  std::tuple<Args...> args_;
  std::shared_ptr<result_state<R>> result_;
  std::shared_ptr<const std::string> actor_;
  bool settled_ = false;
};

} // namespace detail

template <class T>
class actor {
public:
  /// Calls `method` on the actor's object with `args` (copied or moved into the call); the
  /// result (a copy, if the method returns a reference) is ready when the call has run.
  template <class R, class... Params, class... Args>
  async_result<std::remove_cvref_t<R>> call(R (T::*method)(Params...), Args&&... args) const {
    return ask(method, std::forward<Args>(args)...);
  }
  template <class R, class... Params, class... Args>
  async_result<std::remove_cvref_t<R>> call(R (T::*method)(Params...) const, Args&&... args) const {
    return ask(method, std::forward<Args>(args)...);
  }

  /// Calls `method` without waiting for, or receiving, its result.
  template <class R, class... Params, class... Args>
  void tell(R (T::*method)(Params...), Args&&... args) const {
    post<std::remove_cvref_t<R>>(method, nullptr, std::forward<Args>(args)...);
  }
  template <class R, class... Params, class... Args>
  void tell(R (T::*method)(Params...) const, Args&&... args) const {
    post<std::remove_cvref_t<R>>(method, nullptr, std::forward<Args>(args)...);
  }

  /// Whether the actor still takes calls.
  bool alive() const noexcept { return detail::alive(*core_); }
  /// Stops the actor: the call running finishes, the others fail with actor_stopped.
  void stop() const noexcept { detail::stop(*core_); }
  const std::string& name() const noexcept { return detail::name_of(*core_); }

private:
  template <class U, class... Args>
  friend actor<U> spawn(runtime& rt, actor_options options, Args&&... args);

  explicit actor(std::shared_ptr<detail::actor_core> core) : core_(std::move(core)) {}

  template <class Method, class... Args>
  auto ask(Method method, Args&&... args) const {
    using result_type =
      std::remove_cvref_t<std::invoke_result_t<Method, T&, std::decay_t<Args>...>>;
    auto result = std::make_shared<detail::result_state<result_type>>();
    post<result_type>(method, result, std::forward<Args>(args)...);
    return async_result<result_type>{std::move(result)};
  }

  template <class R, class Method, class... Args>
  void post(Method method, std::shared_ptr<detail::result_state<R>> result, Args&&... args) const {
    using call_type = detail::typed_actor_call<T, R, Method, std::decay_t<Args>...>;
    detail::enqueue(*core_,
                    std::make_shared<call_type>(
                      method, std::tuple<std::decay_t<Args>...>{std::forward<Args>(args)...},
                      std::move(result), detail::shared_name_of(*core_)));
  }

  std::shared_ptr<detail::actor_core> core_;
};

/// Makes a T from `args` here (its constructor's exception comes out of spawn) and starts it as
/// an actor on `rt`.
template <class T, class... Args>
actor<T> spawn(runtime& rt, actor_options options, Args&&... args) {
  auto object = std::make_unique<T>(std::forward<Args>(args)...);
  auto core = detail::start_actor(rt, std::move(options), object.get(),
                                  [](void* p) { delete static_cast<T*>(p); });
  object.release(); // the actor owns it now
  return actor<T>{std::move(core)};
}

template <class T, class... Args>
actor<T> spawn(runtime& rt, Args&&... args) {
  return spawn<T>(rt, actor_options{}, std::forward<Args>(args)...);
}

} // namespace troupe
