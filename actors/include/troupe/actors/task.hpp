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

#include "troupe/actors/detail/failure.hpp"
#include "troupe/actors/serialization.hpp"
#include "troupe/actors/tensor_store.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace troupe {

namespace detail {

/// Parameter and result types of a non-generic callable.
template <class F>
struct callable_traits : callable_traits<decltype(&F::operator())> {};
template <class C, class R, class... A>
struct callable_traits<R (C::*)(A...) const> {
  using result = R;
  using params = std::tuple<A...>;
};
template <class C, class R, class... A>
struct callable_traits<R (C::*)(A...)> : callable_traits<R (C::*)(A...) const> {};
template <class R, class... A>
struct callable_traits<R (*)(A...)> {
  using result = R;
  using params = std::tuple<A...>;
};

template <class F>
concept non_generic_callable = requires {
  &std::decay_t<F>::operator();
}
|| std::is_function_v<std::remove_pointer_t<std::decay_t<F>>>;

/// Whether troupe can encode T (cereal finds a save or serialize for it).
template <class T>
concept serializable = cereal::traits::is_output_serializable<T, byte_output_archive>::value &&
  cereal::traits::is_input_serializable<T, byte_input_archive>::value;

/// What a worker knows of a task: how to run a chunk of encoded calls (encode_calls) and
/// encode their outcomes (encode_outcomes).
using chunk_invoker = std::function<std::vector<std::byte>(std::span<const std::byte> request)>;

/// An item of a chunk whose call threw: which, and what the exception was.
struct call_failure {
  std::uint64_t index = 0;
  failure why;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(index, why.type, why.message);
  }
};

/// A result as it travels: the value (a placeholder byte for void).
template <class R>
using wire_value = std::conditional_t<std::is_void_v<R>, std::uint8_t, R>;

/// A chunk's outcomes: the values of the calls that returned, in order, and the failures.
template <class R>
using chunk_outcomes = std::pair<std::vector<wire_value<R>>, std::vector<call_failure>>;

/// A task of context pools: a chunk of calls, each given the worker's context first.
using context_invoker =
  std::function<std::vector<std::byte>(void* context, std::span<const std::byte> request)>;

/// An actor's method call whose arguments were decoded when it arrived (preparer below): runs
/// it on the object, and returns what encodes its outcome, as a context task's, whenever the
/// answer is sent (so its tensors may go where the answer goes).
using outcome_encoder = std::function<std::vector<std::byte>()>;
using prepared_call = std::function<outcome_encoder(void* object)>;
/// Decodes a chunk of calls of an actor's method now, while the store their tensors came
/// through is active, for a run later on the actor's thread.
using call_preparer = std::function<prepared_call(std::span<const std::byte> request)>;

/// Re-encodes a method's outcomes: decoded while the store they came through is active, encoded
/// inline, for a call relayed on to another process (pools/src/process/relay_host.cpp).
using outcome_transcoder = std::function<std::vector<std::byte>(std::span<const std::byte>)>;

/// Makes a worker's context: from its index (a factory run in the worker), or from bytes (a
/// value sent to it).
using context_maker = std::function<std::shared_ptr<void>(std::size_t index)>;
using context_decoder = std::function<std::shared_ptr<void>(std::span<const std::byte> bytes)>;

class task_registry {
public:
  static task_registry& instance();
  /// Registering a name twice makes it ambiguous: calls to it then fail with
  /// serialization_error rather than run the wrong function.
  void add(const std::string& name, chunk_invoker invoker);
  void add_context_task(const std::string& name, context_invoker invoker);
  void add_call_preparer(const std::string& name, call_preparer preparer);
  void add_outcome_transcoder(const std::string& name, outcome_transcoder transcoder);
  void add_context_factory(const std::string& name, context_maker maker);
  void add_context_type(const std::string& type, context_decoder decoder);

  /// nullptr if no such task (or factory, or context type) is registered in this program.
  const chunk_invoker* find(const std::string& name) const;
  const context_invoker* find_context_task(const std::string& name) const;
  const call_preparer* find_call_preparer(const std::string& name) const;
  const outcome_transcoder* find_outcome_transcoder(const std::string& name) const;
  const context_maker* find_context_factory(const std::string& name) const;
  const context_decoder* find_context_type(const std::string& type) const;

private:
  std::map<std::string, chunk_invoker> tasks_;
  std::map<std::string, context_invoker> context_tasks_;
  std::map<std::string, call_preparer> call_preparers_;
  std::map<std::string, outcome_transcoder> outcome_transcoders_;
  std::map<std::string, context_maker> context_factories_;
  std::map<std::string, context_decoder> context_types_;
};

} // namespace detail

/// A registered task: its name, and the callable (usable locally too: thread pools call it).
template <class F>
struct task {
  const char* name;
  F fn;

  template <class... A>
  requires std::is_invocable_v<const F&, A...>
  decltype(auto) operator()(A&&... args) const { return std::invoke(fn, std::forward<A>(args)...); }
};

namespace detail {

template <class Params>
struct decayed;
template <class... A>
struct decayed<std::tuple<A...>> {
  using type = std::tuple<std::decay_t<A>...>;
};

/// A chunk's calls as bytes, in the plainest form the arguments allow, since this is the
/// per-item cost of a process pool: one argument travels as std::vector<A> (a single memcpy for
/// numbers), none as a byte per call (a bare count would let 8 bytes from a peer ask for any
/// number of runs; the decoder checks a vector's length against the bytes that carry it),
/// several as a vector of tuples.
template <class Args>
std::vector<std::byte> encode_calls(const std::vector<Args>& calls) {
  if constexpr (std::tuple_size_v<Args> == 0) {
    return serialize(std::vector<std::uint8_t>(calls.size(), 0));
  } else if constexpr (std::tuple_size_v<Args> == 1) {
    std::vector<std::tuple_element_t<0, Args>> single;
    single.reserve(calls.size());
    for (const auto& c : calls)
      single.push_back(std::get<0>(c));
    return serialize(single);
  } else {
    return serialize(calls);
  }
}

/// Decodes encode_calls<Args> and calls `each(arguments...)` for every call, in order.
template <class Args, class Each>
void for_each_call(std::span<const std::byte> bytes, Each&& each) {
  if constexpr (std::tuple_size_v<Args> == 0) {
    const auto count = deserialize<std::vector<std::uint8_t>>(bytes).size();
    for (std::size_t i = 0; i < count; ++i)
      each();
  } else if constexpr (std::tuple_size_v<Args> == 1) {
    auto single = deserialize<std::vector<std::tuple_element_t<0, Args>>>(bytes);
    for (auto& a : single)
      each(a);
  } else {
    auto calls = deserialize<std::vector<Args>>(bytes);
    for (auto& c : calls)
      std::apply(each, c);
  }
}

/// Decodes encode_calls<Args>: the calls' arguments, kept.
template <class Args>
std::vector<Args> decode_calls(std::span<const std::byte> bytes) {
  std::vector<Args> calls;
  for_each_call<Args>(bytes, [&](auto&... a) { calls.emplace_back(std::move(a)...); });
  return calls;
}

/// Runs each call `for_each` gives (it calls its argument with each call's arguments) and keeps
/// the outcomes; `Context` (if not void) is passed first.
template <class Args, class Context = void, class F, class ForEach>
auto run_calls(const F& fn, ForEach&& for_each, void* context) {
  using R = std::remove_cvref_t<typename callable_traits<F>::result>;
  chunk_outcomes<R> out;
  std::uint64_t index = 0;
  const auto call = [&](auto&... a) -> decltype(auto) {
    // The arguments came through the active store and the outcome goes through it; what the
    // task's own code serializes (a call it makes, a file it writes) does not.
    tensor_store_pause pause;
    if constexpr (std::is_void_v<Context>)
      return std::invoke(fn, a...);
    else
      return std::invoke(fn, *static_cast<Context*>(context), a...);
  };
  for_each([&](auto&... a) {
    try {
      if constexpr (std::is_void_v<R>) {
        call(a...);
        out.first.push_back(0);
      } else {
        out.first.push_back(call(a...));
      }
    } catch (...) {
      out.second.push_back({index, current_failure()});
    }
    ++index;
  });
  return out;
}

/// Runs each call of a chunk and encodes the outcomes; `Context` (if not void) is passed first.
template <class Args, class Context = void, class F>
std::vector<std::byte> invoke_chunk(const F& fn, std::span<const std::byte> request,
                                    void* context = nullptr) {
  return serialize(run_calls<Args, Context>(
    fn, [&](auto&& each) { for_each_call<Args>(request, each); }, context));
}

/// The argument tuple a task's calls travel as.
template <class F>
using task_args = typename decayed<typename callable_traits<std::decay_t<F>>::params>::type;

template <class Params>
struct context_split; // (Ctx&, Args...): the context type, and Args... decayed
template <class First, class... Rest>
struct context_split<std::tuple<First, Rest...>> {
  using context = std::remove_reference_t<First>;
  using args = std::tuple<std::decay_t<Rest>...>;
};

/// Whether F's first parameter is a non-const reference: a task context pools can run.
template <class F>
constexpr bool takes_context = [] {
  using params = typename callable_traits<std::decay_t<F>>::params;
  if constexpr (std::tuple_size_v<params> == 0) {
    return false;
  } else {
    using first = std::tuple_element_t<0, params>;
    return std::is_lvalue_reference_v<first> && !std::is_const_v<std::remove_reference_t<first>>;
  }
}();

template <class F>
using context_of =
  typename context_split<typename callable_traits<std::decay_t<F>>::params>::context;
template <class F>
using context_task_args =
  typename context_split<typename callable_traits<std::decay_t<F>>::params>::args;

template <class T>
constexpr bool all_serializable = false;
template <class... A>
constexpr bool all_serializable<std::tuple<A...>> = (serializable<A> && ...);

/// Registers `t` with the registry at static initialisation: for plain pools when its
/// parameters can travel, for context pools when its first parameter can take a context.
template <class F>
bool register_task(const task<F>& t) {
  if constexpr (all_serializable<task_args<F>>)
    task_registry::instance().add(t.name, [fn = t.fn](std::span<const std::byte> request) {
      return invoke_chunk<task_args<F>>(fn, request);
    });
  if constexpr (takes_context<F>)
    task_registry::instance().add_context_task(
      t.name, [fn = t.fn](void* context, std::span<const std::byte> request) {
        return invoke_chunk<context_task_args<F>, context_of<F>>(fn, request, context);
      });
  return true;
}

/// Registers a context factory: `fn(worker index)` makes a worker's context, in the worker.
template <class F>
bool register_context_factory(const task<F>& t) {
  using context = std::remove_cvref_t<typename callable_traits<std::decay_t<F>>::result>;
  task_registry::instance().add_context_factory(t.name, [fn = t.fn](std::size_t index) {
    return std::shared_ptr<void>(std::make_shared<context>(fn(index)));
  });
  return true;
}

/// Context types that travel as values: registered by the pools that send them.
template <class Context>
struct context_type {
  static std::string name() { return type_name<Context>(); }
  static inline const bool registered = [] {
    task_registry::instance().add_context_type(name(), [](std::span<const std::byte> bytes) {
      return std::shared_ptr<void>(std::make_shared<Context>(deserialize<Context>(bytes)));
    });
    return true;
  }();
};

} // namespace detail

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
