// inbatch_parallel: batchflow's "run this per-item method in parallel over my batch". Made once
// (the decorator), called per batch; the method handles one item, and its results come back in
// item order to a post function.
//
//   auto normalise = troupe::inbatch_parallel(rt, troupe::inits::indices,
//     [](images& b, std::size_t i, float scale) { b.rows[i] = scale_row(b.rows[i], scale); });
//   normalise(batch, 0.5f);                   // returns `batch`; parallel_action_failed if any
//   failed
//
//   auto stacked = troupe::inbatch_parallel(rt, troupe::inits::items, load, stack_rows,
//                                           {.target = troupe::inbatch_target::processes});
//   auto out = stacked(batch);                // stack_rows(batch, outcomes) for the result
//
// The method is called as method(batch, init arguments..., the call's extra arguments...,
// [named_args]): the named arguments (see named_args.hpp and item_args.hpp) only if it takes a
// `const named_args&` last. init is called as init(batch, extras..., named) or init(batch,
// extras...) or init(batch), whichever it takes, or is a plain sequence of elements; post
// likewise as post(batch, outcomes, extras..., named) ... post(batch, outcomes), with
// `troupe::outcomes<R>&` (outcome.hpp), one per element, in init order. init and post get the
// decorator's extras under the call's named arguments; the method gets the item's named
// arguments under the call's.
//
// Targets (inbatch_options::target, or per call with inbatch_call): threads share the caller's
// batch (the method must tolerate concurrent calls on different items); processes run a
// registered task (TROUPE_TASK, a lambda without captures) on a copy of the batch in a worker
// process, whose changes the caller never sees, a chunk of items per message, and a worker that
// dies fails the items of its chunk with worker_lost; async calls the method on the calling
// thread, which starts the work and returns an async_result or std::future, awaited in order;
// sequential runs the items on the calling thread, and with debug the first exception
// propagates and the items after it never run. A method returning an awaitable is awaited on
// every target. n_workers caps the items running (or started and not yet awaited) at once.
//
// Where batchflow has quirks the port differs: no 2-tuple ambiguity (item_args.hpp); no
// `timeout` that does nothing; pools are kept by the action across calls (or passed in) rather
// than made per call; a failure without post throws troupe::parallel_action_failed, which keeps
// every failure. Calling a threads action from a task of the same pool can deadlock.
#pragma once

#include "troupe/actors/runtime.hpp"
#include "troupe/inbatch/detail/inbatch_calls.hpp"
#include "troupe/inbatch/detail/inbatch_items.hpp"
#include "troupe/inbatch/detail/inbatch_pools.hpp"
#include "troupe/inbatch/detail/inbatch_targets.hpp"
#include "troupe/inbatch/inbatch_inits.hpp"
#include "troupe/inbatch/inbatch_options.hpp"
#include "troupe/inbatch/item_args.hpp"
#include "troupe/inbatch/named_args.hpp"
#include "troupe/pools/outcome.hpp"
#include "troupe/pools/parallel_action_failed.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <ranges>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe {

/// The post of an action without one.
struct no_post_t {};

/// An action made by inbatch_parallel: call it with a batch (and the call's arguments) to run the
/// method over the batch's items in parallel and hand the outcomes to post.
template <class Init, class Method, class Post>
class inbatch_action {
public:
  /// Made by inbatch_parallel.
  inbatch_action(runtime& rt, Init init, Method method, Post post, inbatch_options options)
    : init_(std::move(init)), method_(std::move(method)), post_(std::move(post)),
      options_(std::move(options)), pools_(std::make_shared<detail::inbatch_pools>(rt)) {
    if constexpr (std::is_constructible_v<bool, const Init&> && !std::ranges::range<Init>)
      if (!static_cast<bool>(init_))
        throw invalid_argument("inbatch_parallel: init is missing (an empty function); give a "
                               "function, a standard init (troupe::inits) or a sequence");
    detail::check_inbatch_settings(options_.target, options_.debug, workers(std::nullopt));
    if (options_.chunksize == std::size_t{0})
      throw invalid_argument("inbatch_parallel: chunksize is 0; a message needs at least 1 item");
    if (options_.target == inbatch_target::processes)
      check_processes_method();
  }

  /// Runs the action over `batch`, `extra` being the call's extra arguments.
  template <class Batch, class... Extra>
  decltype(auto) operator()(Batch& batch, const Extra&... extra) {
    return call(batch, inbatch_call{}, extra...);
  }

  /// As operator(), with this call's target, debug, n_workers and named arguments.
  template <class Batch, class... Extra>
  decltype(auto) call(Batch& batch, const inbatch_call& how, const Extra&... extra) {
    const auto target = how.target.value_or(options_.target);
    const bool debug = how.debug.value_or(options_.debug);
    const std::size_t n_workers = workers(how.n_workers);
    detail::check_inbatch_settings(target, debug, n_workers);
    if (target == inbatch_target::processes)
      check_processes_method();
    const named_args outer = how.named.over(options_.extras);
    const auto elements = elements_of(batch, outer, extra...);
    const detail::item_calls<Batch, std::remove_cvref_t<decltype(elements)>, Extra...> calls{
      batch, elements, how.named, extra...};
    auto outcomes = run(calls, target, debug, n_workers);
    if constexpr (std::is_same_v<Post, no_post_t>) {
      throw_if_failed(outcomes);
      return (batch);
    } else {
      return detail::call_with_what_it_takes(post_, std::forward_as_tuple(batch, outcomes), outer,
                                             extra...);
    }
  }

private:
  std::size_t workers(std::optional<std::size_t> per_call) const {
    return per_call.value_or(options_.n_workers.value_or(default_inbatch_workers()));
  }

  template <class Batch, class... Extra>
  auto elements_of(Batch& batch, const named_args& outer, const Extra&... extra) {
    if constexpr (std::ranges::range<Init> && !std::is_invocable_v<Init&, Batch&>) {
      return std::vector<std::ranges::range_value_t<Init>>(std::ranges::begin(init_),
                                                           std::ranges::end(init_));
    } else {
      auto made =
        detail::call_with_what_it_takes(init_, std::forward_as_tuple(batch), outer, extra...);
      using element = std::ranges::range_value_t<decltype(made)>;
      if constexpr (std::is_same_v<decltype(made), std::vector<element>> ||
                    (std::ranges::view<decltype(made)> &&
                     std::ranges::random_access_range<decltype(made)> &&
                     std::ranges::sized_range<decltype(made)>))
        return made; // a vector, or a view like iota that gives item i without a copy
      else
        return std::vector<element>(std::ranges::begin(made), std::ranges::end(made));
    }
  }

  template <class Calls>
  auto run(const Calls& calls, inbatch_target target, bool debug, std::size_t n_workers) {
    static_assert(Calls::template callable<Method>,
                  "inbatch_parallel: the method cannot be called as method(batch, init "
                  "arguments..., extra arguments...[, const named_args&])");
    constexpr bool with_named = Calls::template takes_named<Method>;
    using direct =
      std::remove_cvref_t<decltype(calls.template invoke<with_named>(method_, std::size_t{0}))>;
    using R = typename detail::awaited<direct>::type;
    outcomes<R> out(calls.size());
    if constexpr (!with_named)
      refuse_named_arguments(calls);
    const std::size_t lanes = std::min(n_workers, std::max<std::size_t>(calls.size(), 1));
    switch (target) {
    case inbatch_target::sequential:
      detail::run_sequential<R, with_named>(calls, method_, debug, out);
      break;
    case inbatch_target::threads: {
      const auto pool = threads(n_workers);
      detail::run_threads<R, with_named>(calls, method_, pool.first,
                                         std::min(lanes, pool.first.size()), out);
      break;
    }
    case inbatch_target::processes: run_on_processes<R, with_named>(calls, lanes, out); break;
    case inbatch_target::async:
      if constexpr (!detail::awaited<direct>::is_awaitable)
        throw invalid_argument("inbatch_target::async needs a method that returns an "
                               "async_result or std::future; this one returns " +
                               detail::type_name<direct>());
      else
        detail::run_async<R, with_named>(calls, method_, n_workers, out);
      break;
    }
    detail::outcome_writer::finish(out);
    return out;
  }

  template <class R, bool WithNamed, class Calls>
  void run_on_processes(const Calls& calls, std::size_t lanes, outcomes<R>& out) {
    if constexpr (detail::task_object<Method>) {
      using F = detail::task_function<Method>;
      using batch = std::remove_cvref_t<decltype(calls.batch())>;
      using call = typename Calls::template value_tuple<WithNamed>;
      if constexpr (!detail::serializable<batch> || !detail::serializable<call> ||
                    !(std::is_void_v<R> || detail::serializable<R>) ||
                    !std::is_default_constructible_v<F>) {
        throw invalid_argument(
          "inbatch_target::processes: the batch (" + detail::type_name<batch>() +
          "), the items' arguments and the method's result must be serializable, and the "
          "method a TROUPE_TASK of a lambda without captures");
      } else {
        auto owned = options_.processes ? nullptr : pools_->processes(process_workers(lanes));
        auto& pool = options_.processes ? *options_.processes : *owned;
        if (calls.size() == 0)
          return; // nothing to send, not even the batch
        const std::size_t messages = std::min(calls.size(), 4 * lanes); // ~4 a worker at once
        const std::size_t chunk_size =
          options_.chunksize.value_or((calls.size() + messages - 1) / messages);
        detail::run_processes<R, detail::inbatch_chunk<F, batch, call>, WithNamed>(
          calls, pool, pools_->segments(), std::min(lanes, pool.size()), chunk_size, out);
      }
    }
  }

  /// The thread pool to run on: the one given, or the action's own.
  std::pair<thread_pool&, std::shared_ptr<thread_pool>> threads(std::size_t n_workers) {
    if (options_.threads)
      return {*options_.threads, nullptr};
    auto own = pools_->threads(n_workers);
    return {*own, own};
  }

  static std::size_t process_workers(std::size_t lanes) {
    return std::min(lanes, detail::available_cpus());
  }

  void check_processes_method() const {
    if constexpr (!detail::task_object<Method>)
      throw invalid_argument("inbatch_target::processes runs a registered method: declare it "
                             "with TROUPE_TASK(name, lambda) and pass `name` (this method, " +
                             detail::type_name<Method>() + ", is not registered)");
  }

  template <class Calls>
  static void refuse_named_arguments(const Calls& calls) {
    const std::size_t checked = Calls::elements_have_named ? calls.size() : 1;
    for (std::size_t i = 0; i < std::min(checked, calls.size()); ++i)
      if (const auto names = calls.named_nobody_takes(i); !names.empty())
        throw invalid_argument("inbatch_parallel: item " + std::to_string(i) +
                               " has named arguments (" + names +
                               ") but the method takes no const named_args& parameter");
  }

  template <class R>
  static void throw_if_failed(const outcomes<R>& out) {
    if (!out.any_failed())
      return;
    std::vector<std::pair<std::size_t, std::exception_ptr>> failures;
    for (const auto& o : out)
      if (o.failed())
        failures.emplace_back(o.index(), o.error());
    throw parallel_action_failed(std::move(failures), out.size());
  }

  Init init_;
  Method method_;
  Post post_;
  inbatch_options options_;
  std::shared_ptr<detail::inbatch_pools> pools_;
};

/// An action that runs `method` over the elements `init` makes, without a post: a call returns
/// the batch, or throws parallel_action_failed if any item failed.
template <class Init, class Method>
auto inbatch_parallel(runtime& rt, Init init, Method method, inbatch_options options = {}) {
  return inbatch_action<Init, Method, no_post_t>(rt, std::move(init), std::move(method), {},
                                                 std::move(options));
}

/// An action whose calls return `post(batch, outcomes, ...)`.
template <class Init, class Method, class Post>
requires(!std::is_same_v<std::remove_cvref_t<Post>, inbatch_options>) auto inbatch_parallel(
  runtime& rt, Init init, Method method, Post post, inbatch_options options = {}) {
  return inbatch_action<Init, Method, Post>(rt, std::move(init), std::move(method), std::move(post),
                                            std::move(options));
}

} // namespace troupe
