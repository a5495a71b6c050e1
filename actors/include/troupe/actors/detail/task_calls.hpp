// How a task's calls travel and run: a chunk of calls encoded in the plainest form its
// arguments allow, run in a worker with each outcome kept (a value or a failure), and the
// registration TROUPE_TASK does at static initialisation.
#pragma once

#include "troupe/actors/detail/task_registry.hpp"
#include "troupe/actors/detail/tensor_store.hpp"
#include "troupe/actors/serialization.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace troupe {

template <class F>
struct task;

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
} // namespace troupe
