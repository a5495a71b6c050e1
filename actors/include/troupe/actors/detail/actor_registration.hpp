// What TROUPE_ACTOR registers: how another process makes an actor of a type from its
// constructor's arguments as bytes, and runs each listed method from its key and its arguments
// as bytes (actor_type.hpp says how users name them).
#pragma once

#include "troupe/actors/error.hpp"
#include "troupe/actors/task.hpp"

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe {

template <class... Params>
struct constructor;

namespace detail {

template <class Ctor>
struct constructor_args {
  using type = std::tuple<std::decay_t<Ctor>>;
};
template <>
struct constructor_args<void> {
  using type = std::tuple<>;
};
template <class... Params>
struct constructor_args<constructor<Params...>> {
  using type = std::tuple<std::decay_t<Params>...>;
};

/// What TROUPE_ACTOR says of T: its name, its constructor's arguments as they travel, and the
/// methods other processes may call, a method's key being its place in that list.
template <class T, class Ctor, class... Methods>
struct actor_spec {
  using type = T;
  using ctor_args = typename constructor_args<Ctor>::type;
  const char* name;
  std::tuple<Methods...> methods;
};

template <class T, class Ctor, class... Methods>
constexpr actor_spec<T, Ctor, Methods...> make_actor_spec(const char* name, Methods... methods) {
  return {name, {methods...}};
}

/// Whether T was registered with TROUPE_ACTOR (found by argument-dependent lookup, in T's own
/// namespace).
template <class T>
concept registered_actor = requires(T* p) {
  troupe_actor_spec(p);
};

template <registered_actor T>
auto spec_of() {
  return troupe_actor_spec(static_cast<T*>(nullptr));
}

template <registered_actor T>
std::string actor_type_key() {
  return std::string{"troupe.actor:"} + spec_of<T>().name;
}

/// The key of `method` among those TROUPE_ACTOR listed for T (invalid_argument if it is not one).
template <registered_actor T, class Method>
std::string method_key(Method method) {
  const auto spec = spec_of<T>();
  constexpr auto none = static_cast<std::size_t>(-1);
  std::size_t index = 0, found = none;
  std::apply(
    [&](auto... listed) {
      (([&] {
         if constexpr (std::is_same_v<decltype(listed), Method>)
           if (found == none && listed == method)
             found = index;
         ++index;
       }()),
       ...);
    },
    spec.methods);
  if (found == none)
    throw invalid_argument(std::string{"actor type '"} + spec.name +
                           "': this method is not among those its TROUPE_ACTOR lists, so no other "
                           "process can call it");
  return actor_type_key<T>() + "#" + std::to_string(found);
}

/// A method as a context task's function: the object first, then the decoded arguments.
template <class T, class R, class... P>
auto method_function(R (T::*method)(P...)) {
  return [method](T& self, std::decay_t<P>&... args) -> std::remove_cvref_t<R> {
    return (self.*method)(std::move(args)...);
  };
}
template <class T, class R, class... P>
auto method_function(R (T::*method)(P...) const) {
  return [method](T& self, std::decay_t<P>&... args) -> std::remove_cvref_t<R> {
    return (self.*method)(std::move(args)...);
  };
}
/// The argument tuple a call of the method travels as.
template <class T, class R, class... P>
std::tuple<std::decay_t<P>...> method_args(R (T::*)(P...));
template <class T, class R, class... P>
std::tuple<std::decay_t<P>...> method_args(R (T::*)(P...) const);

/// How a process runs a call of `method` on an actor it holds: a context task whose context is
/// the actor's object.
template <class T, class Method>
context_invoker method_invoker(Method method) {
  using args = decltype(method_args(method));
  return [fn = method_function(method)](void* object, std::span<const std::byte> request) {
    return invoke_chunk<args, T>(fn, request, object);
  };
}

/// The same in two steps, for calls that wait in a mailbox: the arguments are decoded as the
/// call arrives, while the store their tensors came through is active; the method runs later,
/// and its outcome is encoded when the answer is sent.
template <class T, class Method>
call_preparer method_preparer(Method method) {
  using args = decltype(method_args(method));
  return [fn = method_function(method)](std::span<const std::byte> request) -> prepared_call {
    auto calls = std::make_shared<std::vector<args>>(decode_calls<args>(request));
    return [fn, calls](void* object) -> outcome_encoder {
      using result = std::remove_cvref_t<typename callable_traits<decltype(fn)>::result>;
      auto outcomes = std::make_shared<chunk_outcomes<result>>(run_calls<args, T>(
        fn,
        [&](auto&& each) {
          for (auto& call : *calls)
            std::apply(each, call);
        },
        object));
      return [outcomes] { return serialize(*outcomes); };
    };
  };
}

/// How a process that relays a call of `method` re-encodes its outcomes inline.
template <class Method>
outcome_transcoder method_outcome_transcoder(Method method) {
  using result =
    std::remove_cvref_t<typename callable_traits<decltype(method_function(method))>::result>;
  return [](std::span<const std::byte> outcomes) {
    const auto decoded = deserialize<chunk_outcomes<result>>(outcomes);
    tensor_store_pause inline_tensors;
    return serialize(decoded);
  };
}

/// Registers T's constructor (as a context type made from its arguments) and its methods (as
/// context tasks) at static initialisation.
template <registered_actor T>
bool register_actor() {
  const auto spec = spec_of<T>();
  using spec_type = decltype(spec);
  using args = typename spec_type::ctor_args;
  static_assert(all_serializable<args>, "TROUPE_ACTOR: the constructor's parameters must be "
                                        "serializable, to travel to the process that makes it");
  auto& registry = task_registry::instance();
  registry.add_context_type(actor_type_key<T>(), [](std::span<const std::byte> bytes) {
    auto values = deserialize<args>(bytes);
    return std::apply(
      [](auto&... a) { return std::shared_ptr<void>(std::make_shared<T>(std::move(a)...)); },
      values);
  });
  std::size_t index = 0;
  std::apply(
    [&](auto... methods) {
      ((registry.add_context_task(actor_type_key<T>() + "#" + std::to_string(index),
                                  method_invoker<T>(methods)),
        registry.add_call_preparer(actor_type_key<T>() + "#" + std::to_string(index),
                                   method_preparer<T>(methods)),
        registry.add_outcome_transcoder(actor_type_key<T>() + "#" + std::to_string(index++),
                                        method_outcome_transcoder(methods))),
       ...);
    },
    spec.methods);
  return true;
}

/// The constructor's arguments of a T made elsewhere, as they travel.
template <registered_actor T, class... A>
std::vector<std::byte> encode_constructor(A&&... args) {
  using ctor_args = typename decltype(spec_of<T>())::ctor_args;
  static_assert(std::is_constructible_v<ctor_args, A&&...>,
                "these arguments do not match the constructor TROUPE_ACTOR names");
  return serialize(ctor_args{std::forward<A>(args)...});
}

} // namespace detail
} // namespace troupe
