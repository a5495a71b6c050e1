// process_pool: the thread pool's API over worker processes, for work that must not share a
// process (a crash-prone or non-thread-safe library, a device per worker), with registered tasks.
//
//   TROUPE_TASK(square, [](int x) { return x * x; });   // at namespace scope
//
//   int main(int argc, char** argv) {
//     troupe::runtime rt{argc, argv};                   // a worker process never gets past this
//     troupe::process_pool procs{rt, {.workers = 2}};
//     auto ys = procs.map(square, xs);
//     for (int y : procs.imap_unordered(square, xs)) ...
//     auto r = procs.apply_async(square, 7);             // troupe::async_result<int>
//   }
//
// Workers are this program, re-executed; they die with the pool's process. Arguments and results
// travel encoded through shared-memory queues, values of any size (large ones in segments of
// their own). A task's exception comes back as itself when its type is registered (the standard
// ones and troupe's are; see troupe/actors/remote_exception.hpp), else as troupe::task_error;
// either way troupe::origin_of(e) names the worker. A worker that dies or freezes mid-task fails
// what it held with troupe::worker_lost (or re-runs it, see max_retries) and is replaced:
// nothing hangs, nothing is silently lost. A task learns its worker from troupe::this_worker().
#pragma once

#include "troupe/actors/runtime.hpp"
#include "troupe/actors/task.hpp"
#include "troupe/pools/async_result.hpp"
#include "troupe/pools/detail/map_jobs.hpp"
#include "troupe/pools/detail/pool_core.hpp"
#include "troupe/pools/detail/process_jobs.hpp"
#include "troupe/pools/imap_stream.hpp"
#include "troupe/pools/map_options.hpp"
#include "troupe/pools/pool_options.hpp"
#include "troupe/pools/this_worker.hpp"

#include <algorithm>
#include <string>
#include <vector>
#include <memory>
#include <ranges>
#include <tuple>
#include <type_traits>

namespace troupe {

namespace detail {

template <class T>
struct is_task : std::false_type {
  using function = int (*)(int); // a stand-in, so misuse reports only check_task's message
};
template <class F>
struct is_task<task<F>> : std::true_type {
  using function = F;
};

/// The callable of task type Task.
template <class Task>
using task_function = typename is_task<std::remove_cvref_t<Task>>::function;

/// The checks that make misuse a compile-time error that says what to do. `Ctx` is the pool's
/// context type, void for plain process pools.
template <class Task, class Ctx>
constexpr void check_task() {
  static_assert(is_task<std::remove_cvref_t<Task>>::value,
                "a process pool runs registered tasks: declare the function at namespace scope "
                "with TROUPE_TASK(name, callable) and pass `name`");
  if constexpr (!std::is_void_v<Ctx> && is_task<std::remove_cvref_t<Task>>::value) {
    using F = task_function<Task>;
    static_assert(takes_context<F>, "a context pool calls f(ctx, args...): the task's first "
                                    "parameter must be a non-const reference to the context");
    if constexpr (takes_context<F>)
      static_assert(std::is_same_v<context_of<F>, Ctx>,
                    "the task's context parameter is not the pool's context type");
  }
  if constexpr (is_task<std::remove_cvref_t<Task>>::value) {
    using F = task_function<Task>;
    static_assert(all_serializable<call_args<F, !std::is_void_v<Ctx>>>,
                  "a task's argument types must be serializable to cross to a worker process: "
                  "give the type a `template <class Archive> void serialize(Archive&)` member");
    using R = task_result_t<F>;
    static_assert(std::is_void_v<R> || serializable<R>,
                  "a task's result type must be serializable to come back from a worker "
                  "process: give the type a `template <class Archive> void serialize(Archive&)` "
                  "member");
  }
}

} // namespace detail

/// A process pool; `Ctx` is its workers' context type (void: no context). Use the aliases
/// process_pool and ctx_process_pool<Ctx>.
template <class Ctx>
class basic_process_pool {
  static constexpr bool with_context = !std::is_void_v<Ctx>;

public:
  /// A pool without contexts.
  explicit basic_process_pool(runtime& rt, const process_pool_options& options = {})
    requires(!with_context)
    : core_(std::make_shared<detail::pool_core>(rt, options, detail::context_settings{})) {}

  /// One worker per context value; each is encoded and sent to its worker. If
  /// `options.workers` is set it must equal contexts.size().
  basic_process_pool(runtime& rt, const std::vector<Ctx>& contexts,
                     const process_pool_options& options = {})
    requires(with_context)
    : core_(std::make_shared<detail::pool_core>(rt, with_workers(options, contexts.size()),
                                                values_of(contexts, options))) {}

  /// `options.workers` workers, each making its context in its own process with the
  /// registered factory (TROUPE_CONTEXT_FACTORY): `factory(worker index)`.
  template <class Factory>
  basic_process_pool(runtime& rt, const task<Factory>& factory,
                     const process_pool_options& options = {})
    requires(with_context)
    : core_(std::make_shared<detail::pool_core>(rt, options,
                                                detail::context_settings{factory.name, "", {}})) {
    static_assert(std::is_same_v<std::remove_cvref_t<detail::task_result_t<Factory>>, Ctx>,
                  "the context factory must return the pool's context type");
  }

  ~basic_process_pool() {
    core_->terminate();
    core_->join();
  }
  basic_process_pool(const basic_process_pool&) = delete;
  basic_process_pool& operator=(const basic_process_pool&) = delete;

  /// Runs `t(args...)` in a worker process and returns its result (rethrows what it threw).
  template <class Task, class... Args>
  auto apply(const Task& t, Args&&... args) {
    return apply_async(t, std::forward<Args>(args)...).get();
  }

  template <class Task, class... Args>
  auto apply_async(const Task& t, Args&&... args) {
    detail::check_task<Task, Ctx>();
    using F = detail::task_function<Task>;
    using R = detail::task_result_t<F>;
    auto state = std::make_shared<detail::result_state<R>>();
    core_->submit(std::make_shared<detail::process_apply_job<F, with_context>>(
      t, detail::call_args<F, with_context>(std::forward<Args>(args)...), state));
    return async_result<R>{std::move(state)};
  }

  /// `[t(x) for x in items]` in input order. `options`: the chunksize, items per message to a
  /// worker (default ceil(n / (4 workers))), and progress reporting (map_options.hpp).
  /// Rethrows the failure of the first failing item.
  template <class Task, std::ranges::input_range Range>
  auto map(const Task& t, Range&& items, const map_options& options = {}) {
    return run_map<false>(t, std::forward<Range>(items), options);
  }

  template <class Task, std::ranges::input_range Range>
  auto map_async(const Task& t, Range&& items, const map_options& options = {}) {
    return submit_map<false>(t, detail::owned_items{detail::collect(std::forward<Range>(items))},
                             options);
  }

  /// `[t(*args) for args in items]`: each item is a tuple-like of arguments.
  template <class Task, std::ranges::input_range Range>
  auto starmap(const Task& t, Range&& items, const map_options& options = {}) {
    return run_map<true>(t, std::forward<Range>(items), options);
  }

  template <class Task, std::ranges::input_range Range>
  auto starmap_async(const Task& t, Range&& items, const map_options& options = {}) {
    return submit_map<true>(t, detail::owned_items{detail::collect(std::forward<Range>(items))},
                            options);
  }

  /// Results in input order as they arrive (default chunksize 1), a bounded window ahead.
  template <class Task, std::ranges::input_range Range>
  auto imap(const Task& t, Range&& items, const map_options& options = {}) {
    return stream<true>(t, std::forward<Range>(items), options);
  }

  /// Results in completion order as they arrive (default chunksize 1).
  template <class Task, std::ranges::input_range Range>
  auto imap_unordered(const Task& t, Range&& items, const map_options& options = {}) {
    return stream<false>(t, std::forward<Range>(items), options);
  }

  /// No new work; what was submitted still runs. Does not block.
  void close() { core_->close(); }
  /// Stops now: work not yet started fails with troupe::pool_closed.
  void terminate() { core_->terminate(); }
  /// Waits until every worker process has stopped (after close or terminate).
  void join() { core_->join(); }
  /// Workers: the local ones, and the nodes from other hosts serving now.
  std::size_t size() const noexcept { return core_->size(); }

  /// What each worker slot has done: tasks run, items failed, busy time, replacements (and,
  /// for processes, the pid serving it now).
  std::vector<worker_stats> stats() const { return core_->stats(); }

  /// The process ids of the local worker processes running now (a worker starts with its first
  /// task, and a replacement has a new pid).
  std::vector<int> worker_pids() const { return core_->worker_pids(); }

  /// The port nodes from other hosts join on (process_pool_options::remote_secret), or 0.
  std::uint16_t listen_port() const noexcept { return core_->listen_port(); }

private:
  static process_pool_options with_workers(process_pool_options options, std::size_t n) {
    if (n == 0)
      throw invalid_argument("ctx_process_pool needs at least one context, got none");
    if (options.workers && static_cast<std::size_t>(*options.workers) != n)
      throw invalid_argument("ctx_process_pool: " + std::to_string(n) + " contexts given for " +
                             std::to_string(*options.workers) +
                             " workers; there must be one context per worker");
    options.workers = static_cast<int>(n);
    return options;
  }

  static detail::context_settings values_of(const std::vector<Ctx>& contexts,
                                            const process_pool_options&) {
    static_assert(detail::serializable<Ctx>,
                  "context values are sent to the worker processes: give the context type a "
                  "`template <class Archive> void serialize(Archive&)` member, or make it in the "
                  "workers with a TROUPE_CONTEXT_FACTORY");
    (void)detail::context_type<Ctx>::registered;
    detail::context_settings settings{"", detail::context_type<Ctx>::name(), {}};
    for (const auto& c : contexts)
      settings.values.push_back(serialize(c));
    return settings;
  }

  template <bool Spread, class Task, class Range>
  auto run_map(const Task& t, Range&& items, const map_options& options) {
    if constexpr (detail::borrowable_range<Range>)
      return submit_map<Spread>(
               t, detail::borrowed_items{std::ranges::begin(items), std::ranges::size(items)},
               options)
        .get();
    else
      return submit_map<Spread>(
               t, detail::owned_items{detail::collect(std::forward<Range>(items))}, options)
        .get();
  }

  template <bool Spread, class Task, class Items>
  auto submit_map(const Task& t, Items items, const map_options& options) {
    detail::check_task<Task, Ctx>();
    using F = detail::task_function<Task>;
    using R = detail::task_result_t<F>;
    using V = std::conditional_t<std::is_void_v<R>, void, std::vector<R>>;
    const auto chunk_size = detail::chunk_size_for(options.chunksize, items.size(), size());
    auto state = std::make_shared<detail::result_state<V>>();
    auto progress = detail::track(options.report, items.size());
    core_->submit(std::make_shared<detail::process_map_job<Items, F, Spread, with_context>>(
      t, std::move(items), chunk_size, state, std::move(progress)));
    return async_result<V>{std::move(state)};
  }

  template <bool Ordered, class Task, class Range>
  auto stream(const Task& t, Range&& items, const map_options& options) {
    detail::check_task<Task, Ctx>();
    using F = detail::task_function<Task>;
    using R = detail::task_result_t<F>;
    static_assert(!std::is_void_v<R>, "imap needs a task that returns a value");
    auto source = detail::start_imap<R, Ordered>(
      *core_, std::forward<Range>(items), options.chunksize, options.report, size(),
      [t](auto items, std::size_t chunk_size, std::size_t offset,
          std::shared_ptr<detail::imap_sink<R, Ordered>> sink) {
        return std::make_shared<
          detail::process_imap_job<decltype(items), F, Ordered, with_context>>(
          t, std::move(items), chunk_size, offset, std::move(sink));
      });
    return imap_stream<R>{std::move(source), core_};
  }

  std::shared_ptr<detail::pool_core> core_;
};

/// A pool of worker processes running registered tasks.
using process_pool = basic_process_pool<void>;

/// A pool of worker processes that each own a context of type Ctx (a device, a model replica)
/// and call every task as f(ctx, args...) with it. The context lives in the worker process:
/// sent as a value, or made there by a registered factory; a replacement worker gets it again.
template <class Ctx>
using ctx_process_pool = basic_process_pool<Ctx>;

} // namespace troupe
