// The pool API shared by thread_pool and ctx_thread_pool. `Binder` decides how a task is called
// on a worker: plainly, or with the worker's context first.
#pragma once

#include "troupe/pools/async_result.hpp"
#include "troupe/pools/detail/imap_job.hpp"
#include "troupe/pools/detail/map_jobs.hpp"
#include "troupe/pools/detail/pool_core.hpp"
#include "troupe/pools/imap_stream.hpp"
#include "troupe/pools/map_options.hpp"

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
      [&](auto&&... a) -> decltype(auto) {
        return call(env, std::forward<decltype(a)>(a)...);
      },
      std::forward<Tuple>(args));
  }
};

template <class Call, class Item>
using item_result_t =
  std::remove_cvref_t<std::invoke_result_t<Call&, const worker_env&, Item>>;

template <class Binder>
class basic_pool {
  template <class F>
  using bound = typename Binder::template call<std::decay_t<F>>;

public:
  /// Runs `f(args...)` on a worker and returns its result (rethrowing its exception).
  template <class F, class... Args>
  auto apply(F&& f, Args&&... args) {
    return apply_async(std::forward<F>(f), std::forward<Args>(args)...).get();
  }

  /// Runs `f(args...)` on a worker. The arguments are copied (or moved) into the task.
  template <class F, class... Args>
  auto apply_async(F&& f, Args&&... args) {
    auto call = [c = bound<F>{std::forward<F>(f)},
                 tuple = std::make_tuple(std::forward<Args>(args)...)](
                  const worker_env& env) mutable -> decltype(auto) {
      return std::apply([&](auto&... a) -> decltype(auto) { return c(env, std::move(a)...); },
                        tuple);
    };
    using R = std::remove_cvref_t<std::invoke_result_t<decltype(call)&, const worker_env&>>;
    auto state = std::make_shared<result_state<R>>();
    core_->submit(std::make_shared<apply_job<R, decltype(call)>>(std::move(call), state));
    return async_result<R>{std::move(state)};
  }

  /// `[f(x) for x in items]` in input order. `options`: the chunksize, items that go to a
  /// worker at a time (default ceil(n / (4 workers))), and progress reporting (map_options.hpp).
  /// Rethrows the exception of the first failing item.
  template <class F, std::ranges::input_range Range>
  auto map(F&& f, Range&& items, const map_options& options = {}) {
    return run_map(bound<F>{std::forward<F>(f)}, std::forward<Range>(items), options);
  }

  /// As map, without waiting. The items are copied (or moved, from an rvalue range) first.
  template <class F, std::ranges::input_range Range>
  auto map_async(F&& f, Range&& items, const map_options& options = {}) {
    return submit_map(bound<F>{std::forward<F>(f)},
                      owned_items{collect(std::forward<Range>(items))}, options);
  }

  /// `[f(*args) for args in items]`: each item is a tuple-like of arguments.
  template <class F, std::ranges::input_range Range>
  auto starmap(F&& f, Range&& items, const map_options& options = {}) {
    return run_map(spread<bound<F>>{{std::forward<F>(f)}}, std::forward<Range>(items), options);
  }

  template <class F, std::ranges::input_range Range>
  auto starmap_async(F&& f, Range&& items, const map_options& options = {}) {
    return submit_map(spread<bound<F>>{{std::forward<F>(f)}},
                      owned_items{collect(std::forward<Range>(items))}, options);
  }

  /// Results of `f(x)` in input order, as they arrive (default chunksize 1). At most a window of
  /// chunks runs ahead of the consumer.
  template <class F, std::ranges::input_range Range>
  auto imap(F&& f, Range&& items, const map_options& options = {}) {
    return stream<true>(bound<F>{std::forward<F>(f)}, std::forward<Range>(items), options);
  }

  /// Results of `f(x)` in completion order, as they arrive (default chunksize 1).
  template <class F, std::ranges::input_range Range>
  auto imap_unordered(F&& f, Range&& items, const map_options& options = {}) {
    return stream<false>(bound<F>{std::forward<F>(f)}, std::forward<Range>(items), options);
  }

  /// No new work is accepted; work already submitted still runs. Does not block.
  void close() { core_->close(); }

  /// Stops now: work not yet started fails with troupe::pool_closed. Tasks already running
  /// finish (threads cannot be interrupted). Does not block.
  void terminate() { core_->terminate(); }

  /// Waits until every worker has stopped. Only after close() or terminate(): on a running pool
  /// it throws troupe::state_error.
  void join() { core_->join(); }

  /// Number of workers.
  std::size_t size() const noexcept { return core_->size(); }

  /// What each worker slot has done: tasks run, items failed, busy time, replacements (and,
  /// for processes, the pid serving it now).
  std::vector<worker_stats> stats() const { return core_->stats(); }

protected:
  basic_pool(runtime& rt, const pool_options& options, std::vector<void*> contexts = {})
    : core_(std::make_shared<pool_core>(rt, options, std::move(contexts))) {}

  ~basic_pool() {
    core_->terminate();
    core_->join();
  }

  basic_pool(const basic_pool&) = delete;
  basic_pool& operator=(const basic_pool&) = delete;

private:
  template <class Call, class Range>
  auto run_map(Call call, Range&& items, const map_options& options) {
    if constexpr (borrowable_range<Range>) {
      // map() blocks until every chunk has ended, so the caller's range can be read in place.
      borrowed_items view{std::ranges::begin(items), std::ranges::size(items)};
      return submit_map(std::move(call), std::move(view), options).get();
    } else {
      return submit_map(std::move(call), owned_items{collect(std::forward<Range>(items))}, options)
        .get();
    }
  }

  template <class Call, class Items>
  auto submit_map(Call call, Items items, const map_options& options) {
    using R = item_result_t<Call, decltype(items[0])>;
    using V = std::conditional_t<std::is_void_v<R>, void, std::vector<R>>;
    const auto chunk_size = chunk_size_for(options.chunksize, items.size(), size());
    auto state = std::make_shared<result_state<V>>();
    auto progress = track(options.report, items.size());
    core_->submit(std::make_shared<map_job<R, Items, Call>>(std::move(items), chunk_size,
                                                           std::move(call), state,
                                                           std::move(progress)));
    return async_result<V>{std::move(state)};
  }

  template <bool Ordered, class Call, class Range>
  auto stream(Call call, Range&& items, const map_options& options) {
    using R = item_result_t<Call, range_value_t<Range>&>;
    static_assert(!std::is_void_v<R>, "imap needs a task that returns a value; use map for "
                                      "tasks that return void");
    auto source = start_imap<R, Ordered>(
      *core_, std::forward<Range>(items), options.chunksize, options.report, size(),
      [call = std::move(call)](auto items, std::size_t chunk_size, std::size_t offset,
                               std::shared_ptr<imap_sink<R, Ordered>> sink) {
        return std::make_shared<imap_job<R, decltype(items), Call, Ordered>>(
          std::move(items), chunk_size, offset, call, std::move(sink));
      });
    return imap_stream<R>{std::move(source), core_};
  }

  std::shared_ptr<pool_core> core_;
};

} // namespace troupe::detail
