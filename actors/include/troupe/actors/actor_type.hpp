// TROUPE_ACTOR: what another process needs to make an actor of your class and call it. An actor
// in this process (troupe::spawn) needs no registration; one in a worker process or on a world
// member does, since that process builds it from its constructor's arguments as bytes and runs
// each call from a method's key and its arguments as bytes.
//
//   struct counter {
//     explicit counter(int start) : n(start) {}
//     int add(int k) { return n += k; }
//     int get() const { return n; }
//     int n;
//   };
//   TROUPE_ACTOR(counter, int, &counter::add, &counter::get);   // at namespace scope
//
// The second argument is the constructor's parameter: one type, `void` for none, or
// `troupe::constructor<A, B>` for several, named through an alias, since a macro's argument
// cannot hold a comma:
//
//   using stage_args = troupe::constructor<std::string, double>;
//   TROUPE_ACTOR(stage, stage_args, &stage::forward);
//
// The methods listed are those other processes may
// call; their parameter and result types, like the constructor's, must be serializable
// (troupe/actors/serialization.hpp). An overloaded method needs a static_cast to pick one.
#pragma once

#include "troupe/actors/detail/actor_registration.hpp"

namespace troupe {

/// The constructor parameters of an actor type with several (see TROUPE_ACTOR).
template <class... Params>
struct constructor {};

} // namespace troupe

/// Registers actor type `type` (declared in this namespace) so other processes can make it from
/// arguments of constructor `ctor` and call the methods listed. See troupe/actors/actor_type.hpp.
#define TROUPE_ACTOR(type, ctor, ...)                                                              \
  [[maybe_unused]] inline auto troupe_actor_spec(type*) {                                          \
    return ::troupe::detail::make_actor_spec<type, ctor>(#type __VA_OPT__(, ) __VA_ARGS__);        \
  }                                                                                                \
  inline const bool troupe_actor_registered_##type = ::troupe::detail::register_actor<type>()
