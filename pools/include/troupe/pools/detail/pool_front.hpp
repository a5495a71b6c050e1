// The API every pool offers, Python's multiprocessing.Pool's, written once. What differs between
// pools is how a call becomes a job, which the `Jobs` policy says: thread_pool_jobs (any
// callable, run in a worker's thread) or process_pool_jobs (a registered task, run in a worker
// process). A policy provides
//   apply(f, args...)                        -> {job, async_result}
//   map<Spread>(f, items, chunk_size, progress) -> {job, async_result}
//   result_of<F, Item>                       the type a stream of f over Items yields
//   stream<Ordered>(f)                        a maker of jobs over a stream's items
#pragma once

#include "troupe/actors/async_result.hpp"
#include "troupe/pools/detail/imap_job.hpp"
#include "troupe/pools/detail/map_jobs.hpp"
#include "troupe/pools/detail/pool_core.hpp"
#include "troupe/pools/detail/progress_tracker.hpp"
#include "troupe/pools/imap_stream.hpp"
#include "troupe/pools/map_options.hpp"
#include "troupe/pools/worker_stats.hpp"

#include <memory>
#include <ranges>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe::detail {

template <class Jobs>
/// What every pool offers, threads or processes (multiprocessing.Pool's API): apply, apply_async,
/// map, map_async, starmap, starmap_async, imap, imap_unordered, close, terminate, join, size,
/// stats.
class pool_front {
public:
  /// Runs `f(args...)` on a worker and returns its result (rethrowing what it threw).
  template <class F, class... Args>
  auto apply(F&& f, Args&&... args) {
    return apply_async(std::forward<F>(f), std::forward<Args>(args)...).get();
  }

  /// Runs `f(args...)` on a worker. The arguments are copied (or moved) into the task.
  template <class F, class... Args>
  auto apply_async(F&& f, Args&&... args) {
    auto [job, result] = Jobs::apply(std::forward<F>(f), std::forward<Args>(args)...);
    core_->submit(std::move(job));
    return std::move(result);
  }

  /// `[f(x) for x in items]` in input order. `options`: the chunksize, items that go to a
  /// worker at a time (default ceil(n / (4 workers))), and progress reporting (map_options.hpp).
  /// Rethrows the exception of the first failing item.
  template <class F, std::ranges::input_range Range>
  auto map(F&& f, Range&& items, const map_options& options = {}) {
    return run_map<false>(std::forward<F>(f), std::forward<Range>(items), options);
  }

  /// As map, without waiting. The items are copied (or moved, from an rvalue range) first.
  template <class F, std::ranges::input_range Range>
  auto map_async(F&& f, Range&& items, const map_options& options = {}) {
    return submit_map<false>(std::forward<F>(f), owned_items{collect(std::forward<Range>(items))},
                             options);
  }

  /// `[f(*args) for args in items]`: each item is a tuple-like of arguments.
  template <class F, std::ranges::input_range Range>
  auto starmap(F&& f, Range&& items, const map_options& options = {}) {
    return run_map<true>(std::forward<F>(f), std::forward<Range>(items), options);
  }

  template <class F, std::ranges::input_range Range>
  /// As starmap, without waiting. The items are copied (or moved, from an rvalue range) first.
  auto starmap_async(F&& f, Range&& items, const map_options& options = {}) {
    return submit_map<true>(std::forward<F>(f), owned_items{collect(std::forward<Range>(items))},
                            options);
  }

  /// Results of `f(x)` in input order, as they arrive (default chunksize 1), at most a window of
  /// chunks ahead of the consumer (see imap_stream.hpp for how the input is read).
  template <class F, std::ranges::input_range Range>
  auto imap(F&& f, Range&& items, const map_options& options = {}) {
    return stream<true>(std::forward<F>(f), std::forward<Range>(items), options);
  }

  /// Results of `f(x)` in completion order, as they arrive (default chunksize 1).
  template <class F, std::ranges::input_range Range>
  auto imap_unordered(F&& f, Range&& items, const map_options& options = {}) {
    return stream<false>(std::forward<F>(f), std::forward<Range>(items), options);
  }

  /// No new work is accepted; work already submitted still runs. Does not block.
  void close() { core_->close(); }

  /// Stops now: work not yet started fails with troupe::pool_closed. Does not block.
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
  /// A front over the pool `core` runs.
  explicit pool_front(std::shared_ptr<pool_core> core) : core_(std::move(core)) {}

  /// Terminates and joins.
  ~pool_front() {
    core_->terminate();
    core_->join();
  }

  pool_front(const pool_front&) = delete;
  pool_front& operator=(const pool_front&) = delete;

  /// The pool's shared state: its dispatcher and workers.
  std::shared_ptr<pool_core> core_;

private:
  template <bool Spread, class F, class Range>
  auto run_map(F&& f, Range&& items, const map_options& options) {
    // map() blocks until every chunk has ended, so the caller's range can be read in place.
    if constexpr (borrowable_range<Range>)
      return submit_map<Spread>(std::forward<F>(f),
                                borrowed_items{std::ranges::begin(items), std::ranges::size(items)},
                                options)
        .get();
    else
      return submit_map<Spread>(std::forward<F>(f),
                                owned_items{collect(std::forward<Range>(items))}, options)
        .get();
  }

  template <bool Spread, class F, class Items>
  auto submit_map(F&& f, Items items, const map_options& options) {
    const auto chunk_size = chunk_size_for(options.chunksize, items.size(), size());
    auto progress = track(options.report, items.size());
    auto [job, result] = Jobs::template map<Spread>(std::forward<F>(f), std::move(items),
                                                    chunk_size, std::move(progress));
    core_->submit(std::move(job));
    return std::move(result);
  }

  template <bool Ordered, class F, class Range>
  auto stream(F&& f, Range&& items, const map_options& options) {
    using R = typename Jobs::template result_of<F, range_value_t<Range>>;
    static_assert(!std::is_void_v<R>, "imap needs a task that returns a value; use map for "
                                      "tasks that return void");
    auto source =
      start_imap<R, Ordered>(*core_, std::forward<Range>(items), options.chunksize, options.report,
                             size(), Jobs::template stream<Ordered>(std::forward<F>(f)));
    return imap_stream<R>{std::move(source), core_};
  }
};

} // namespace troupe::detail
