// Tasks registered by name, so that another process running the same program can run them.
//
//   TROUPE_TASK(square, [](int x) { return x * x; });     // at namespace scope
//   ...
//   procs.map(square, xs);                                 // runs in worker processes
//
// A task is called with its arguments decoded from bytes in the worker and its result encoded
// back, so its parameter and result types must be serializable (troupe/actors/serialization.hpp)
// and its parameters concrete (not `auto`). Names must be unique within a program.
#pragma once

#include "troupe/actors/detail/task_calls.hpp"
#include "troupe/actors/detail/task_registry.hpp"

#include <functional>
#include <type_traits>
#include <utility>

namespace troupe {

/// A registered task: its name, and the callable (usable locally too: thread pools call it).
template <class F>
struct task {
  /// The name it is registered under.
  const char* name;
  /// The callable.
  F fn;

  /// Calls it here, as a function.
  template <class... A>
  requires std::is_invocable_v<const F&, A...>
  decltype(auto) operator()(A&&... args) const { return std::invoke(fn, std::forward<A>(args)...); }
};

/// The task TROUPE_TASK defines: `fn` under `name`.
template <class F>
task<std::decay_t<F>> make_task(const char* name, F&& fn) {
  static_assert(detail::non_generic_callable<F>,
                "TROUPE_TASK needs a callable with concrete parameter types (no `auto`): "
                "the worker decodes the arguments by type");
  return {name, std::forward<F>(fn)};
}

} // namespace troupe

/// Defines the task `name` at namespace scope and registers it under that name, so worker
/// processes of the same program can run it. A task whose first parameter is a non-const
/// reference, `[](model& m, batch b) {...}`, also runs on context pools, given the worker's own
/// context first.
#define TROUPE_TASK(name, ...)                                                                     \
  inline const auto name = ::troupe::make_task(#name, __VA_ARGS__);                                \
  inline const bool troupe_task_registered_##name = ::troupe::detail::register_task(name)

/// Defines a context factory: `callable(std::size_t worker_index)` returns the context of a
/// context process pool's worker, and runs in that worker (to open a device there, say).
#define TROUPE_CONTEXT_FACTORY(name, ...)                                                          \
  inline const auto name = ::troupe::make_task(#name, __VA_ARGS__);                                \
  inline const bool troupe_context_factory_registered_##name =                                     \
    ::troupe::detail::register_context_factory(name)
