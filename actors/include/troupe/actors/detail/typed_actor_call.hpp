// A call of one method on an actor's object (actor.hpp's call and tell make them): its arguments
// held as the method's parameter types, run here on the object or encoded to run elsewhere, and
// the result it settles. Included by actor.hpp's templates; users need not read it.
#pragma once

#include "troupe/actors/actor_type.hpp"
#include "troupe/actors/async_result.hpp"
#include "troupe/actors/detail/actor_core.hpp"
#include "troupe/actors/detail/failure.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/actors/task.hpp"

#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe::detail {

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
          auto why = decoded.second[0].why.exception(where);
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

/// Puts a call of `method` on `to`'s T with `args` into its mailbox, to settle `result` (none
/// for a tell).
template <class T, class Method, class... Args>
void send_actor_call(actor_core& to, bool idempotent, Method method,
                     std::shared_ptr<result_state<typename method_traits<Method>::result>> result,
                     Args&&... args) {
  static_assert(std::is_constructible_v<typename method_traits<Method>::args, Args&&...>,
                "these arguments do not convert to the method's parameters");
  auto call = std::make_shared<typed_actor_call<T, Method>>(method, std::move(result), to.name(),
                                                            std::forward<Args>(args)...);
  call->idempotent = idempotent;
  to.enqueue(std::move(call));
}

/// Where a handle to the T of `core` is found once it has travelled: a world actor's address,
/// else (for a type TROUPE_ACTOR registers) a number in this process; serialization_error
/// otherwise.
template <class T>
actor_address travelling_address(const std::shared_ptr<actor_core>& core) {
  auto address = core->address();
  if (!address) {
    if constexpr (registered_actor<T>)
      address = travelled_address(core, actor_type_key<T>());
    if (!address)
      cannot_travel(*core->name());
  }
  return *address;
}

/// The core of a handle to a T read back from `address`: serialization_error if it names an
/// actor of another registered type, or one this process cannot reach.
template <class T>
std::shared_ptr<actor_core> resolve_typed_actor(const actor_address& address) {
  if constexpr (registered_actor<T>)
    if (address.type != actor_type_key<T>())
      throw serialization_error("a handle to actor '" + address.name + "' of type " + address.type +
                                " was read as a handle to " + actor_type_key<T>());
  return resolve_actor(address);
}

} // namespace troupe::detail
