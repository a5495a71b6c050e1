// How thread pools turn calls into jobs (the policy of pool_front): any callable, run in a
// worker's thread. `Binder` decides how it is called there: plainly, or with the worker's
// context first.
#pragma once

#include "troupe/actors/async_result.hpp"
#include "troupe/pools/detail/imap_job.hpp"
#include "troupe/pools/detail/map_jobs.hpp"
#include "troupe/pools/detail/pool_front.hpp"
#include "troupe/pools/detail/progress_tracker.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <ranges>
#include <tuple>
#include <type_traits>
#include <utility>

namespace troupe::detail {

/// Calls a task as `f(args...)`.
struct plain_binder {
  template <class F>
  struct call {
    F f;
    template <class... Args>
    decltype(auto) operator()(const worker_env&, Args&&... args) {
      return std::invoke(f, std::forward<Args>(args)...);
    }
  };
};

/// Calls a task as `f(ctx, args...)` with the running worker's own context.
template <class Ctx>
struct context_binder {
  template <class F>
  struct call {
    F f;
    template <class... Args>
    decltype(auto) operator()(const worker_env& env, Args&&... args) {
      return std::invoke(f, *static_cast<Ctx*>(env.context), std::forward<Args>(args)...);
    }
  };
};

/// Unpacks a tuple-like item into the call's arguments (starmap).
template <class Call>
struct spread {
  Call call;
  template <class Tuple>
  decltype(auto) operator()(const worker_env& env, Tuple&& args) {
    return std::apply(
      [&](auto&&... a) -> decltype(auto) { return call(env, std::forward<decltype(a)>(a)...); },
      std::forward<Tuple>(args));
  }
};

template <class Call, class Item>
using item_result_t = std::remove_cvref_t<std::invoke_result_t<Call&, const worker_env&, Item>>;

template <class Binder>
struct thread_pool_jobs {
  template <class F>
  using bound = typename Binder::template call<std::decay_t<F>>;

  template <class F, class Item>
  using result_of = item_result_t<bound<F>, Item&>;

  template <class F, class... Args>
  static auto apply(F&& f, Args&&... args) {
    auto call = [c = bound<F>{std::forward<F>(f)},
                 tuple = std::make_tuple(std::forward<Args>(args)...)](
                  const worker_env& env) mutable -> decltype(auto) {
      return std::apply([&](auto&... a) -> decltype(auto) { return c(env, std::move(a)...); },
                        tuple);
    };
    using R = std::remove_cvref_t<std::invoke_result_t<decltype(call)&, const worker_env&>>;
    auto state = std::make_shared<result_state<R>>();
    job_ptr job = std::make_shared<apply_job<R, decltype(call)>>(std::move(call), state);
    return std::pair{std::move(job), async_result<R>{std::move(state)}};
  }

  template <bool Spread, class F, class Items>
  static auto map(F&& f, Items items, std::size_t chunk_size, progress_ptr progress) {
    auto call = [&] {
      if constexpr (Spread)
        return spread<bound<F>>{{std::forward<F>(f)}};
      else
        return bound<F>{std::forward<F>(f)};
    }();
    using Call = decltype(call);
    using R = item_result_t<Call, decltype(items[0])>;
    using V = std::conditional_t<std::is_void_v<R>, void, std::vector<R>>;
    auto state = std::make_shared<result_state<V>>();
    job_ptr job = std::make_shared<map_job<R, Items, Call>>(
      std::move(items), chunk_size, std::move(call), state, std::move(progress));
    return std::pair{std::move(job), async_result<V>{std::move(state)}};
  }

  template <bool Ordered, class F>
  static auto stream(F&& f) {
    return [call = bound<F>{std::forward<F>(f)}](auto items, std::size_t chunk_size,
                                                 std::size_t offset, auto sink) {
      using R = typename decltype(sink)::element_type::value_type;
      return std::make_shared<imap_job<R, decltype(items), bound<F>, Ordered>>(
        std::move(items), chunk_size, offset, call, std::move(sink));
    };
  }
};

/// The pool API over thread_pool_jobs, for thread_pool and ctx_thread_pool.
template <class Binder>
class basic_pool : public pool_front<thread_pool_jobs<Binder>> {
protected:
  /// A pool of `options.workers` threads on `rt`; with `contexts`, one a worker.
  basic_pool(runtime& rt, const pool_options& options, std::vector<void*> contexts = {})
    : pool_front<thread_pool_jobs<Binder>>(
        std::make_shared<pool_core>(rt, options, std::move(contexts))) {}
};

} // namespace troupe::detail
