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

#include "troupe/actors/actor.hpp"
#include "troupe/actors/async_result.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/task.hpp"
#include "troupe/pools/detail/pool_core.hpp"
#include "troupe/pools/detail/pool_front.hpp"
#include "troupe/pools/detail/process_jobs.hpp"
#include "troupe/pools/imap_stream.hpp"
#include "troupe/pools/map_options.hpp"
#include "troupe/pools/pool_options.hpp"
#include "troupe/pools/this_worker.hpp"

#include <algorithm>
#include <memory>
#include <ranges>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace troupe {

/// Where process_pool::spawn puts an actor: in the worker process of slot `index` (0 to
/// workers - 1), beside the pool's tasks there, instead of a process of its own.
struct in_slot {
  /// The slot.
  std::size_t index = 0;
};

/// A process pool; `Ctx` is its workers' context type (void: no context). Use the aliases
/// process_pool and ctx_process_pool<Ctx>. Its calls are troupe::detail::pool_front's, on tasks
/// registered with TROUPE_TASK, and spawn() for actors.
template <class Ctx>
class basic_process_pool : public detail::pool_front<detail::process_pool_jobs<Ctx>> {
  static constexpr bool with_context = !std::is_void_v<Ctx>;
  using front = detail::pool_front<detail::process_pool_jobs<Ctx>>;

public:
  /// A pool without contexts.
  explicit basic_process_pool(runtime& rt,
                              const process_pool_options& options = {}) requires(!with_context)
    : front(std::make_shared<detail::pool_core>(rt, options, detail::context_settings{})) {}

  /// One worker per context value; each is encoded and sent to its worker. If
  /// `options.workers` is set it must equal contexts.size().
  basic_process_pool(runtime& rt, const std::vector<Ctx>& contexts,
                     const process_pool_options& options = {}) requires(with_context)
    : front(std::make_shared<detail::pool_core>(rt, with_workers(options, contexts.size()),
                                                values_of(contexts, options))) {}

  /// `options.workers` workers, each making its context in its own process with the
  /// registered factory (TROUPE_CONTEXT_FACTORY): `factory(worker index)`.
  template <class Factory>
  basic_process_pool(runtime& rt, const task<Factory>& factory,
                     const process_pool_options& options = {}) requires(with_context)
    : front(std::make_shared<detail::pool_core>(rt, options,
                                                detail::context_settings{factory.name, "", {}})) {
    static_assert(std::is_same_v<std::remove_cvref_t<detail::task_result_t<Factory>>, Ctx>,
                  "the context factory must return the pool's context type");
  }

  // apply, apply_async, map, map_async, starmap, starmap_async, imap, imap_unordered, close,
  // terminate, join, size, stats: see pool_front.hpp. Tasks are registered ones (TROUPE_TASK).

  /// The process ids of the local worker processes running now (a worker starts with its first
  /// task, and a replacement has a new pid).
  std::vector<int> worker_pids() const { return this->core_->worker_pids(); }

  /// The port nodes from other hosts join on (process_pool_options::remote_secret), or 0.
  std::uint16_t listen_port() const noexcept { return this->core_->listen_port(); }

  /// Makes a T from `args` in a new worker process of its own, watched like the pool's workers
  /// (heartbeat_timeout, startup_timeout, max_message_bytes), and returns its handle. T must be
  /// registered with TROUPE_ACTOR. The actor's constructor runs there: if it throws, every call
  /// fails with its exception. When the process dies, options.restart says what happens.
  template <class T, class... A>
  actor<T> spawn(actor_options options, A&&... args) {
    static_assert(detail::registered_actor<T>,
                  "process_pool::spawn makes the actor in another process: register its type "
                  "with TROUPE_ACTOR(type, constructor parameters, methods...)");
    if constexpr (detail::registered_actor<T>)
      return detail::actor_access::make<T>(
        this->core_->spawn_actor(std::move(options), detail::actor_type_key<T>(),
                                 detail::encode_constructor<T>(std::forward<A>(args)...)));
  }
  /// Starts an actor of type T, made from `args`, in a worker process of its own, watched as the
  /// pool's workers are (actor_options first, if given).
  template <class T, class... A>
  actor<T> spawn(A&&... args) {
    return spawn<T>(actor_options{}, std::forward<A>(args)...);
  }

  /// The same, in the worker process of slot `where.index`: the object lives there beside the
  /// pool's tasks (this_worker() is that slot; a device the slot's context opened is at hand),
  /// served by a thread of its own, so its calls never wait behind the pool's work. The slot's
  /// process starts now if it has not. When it dies, the pool replaces it as always, and the
  /// actor is made again in the new one as options.restart allows. It stops when the pool
  /// closes. invalid_argument for a slot the pool's own processes do not have, or a pool with
  /// max_tasks_per_worker (which replaces the processes that actors live in).
  template <class T, class... A>
  actor<T> spawn(in_slot where, actor_options options, A&&... args) {
    static_assert(detail::registered_actor<T>,
                  "process_pool::spawn makes the actor in another process: register its type "
                  "with TROUPE_ACTOR(type, constructor parameters, methods...)");
    if constexpr (detail::registered_actor<T>)
      return detail::actor_access::make<T>(this->core_->spawn_actor_in_slot(
        where.index, std::move(options), detail::actor_type_key<T>(),
        detail::encode_constructor<T>(std::forward<A>(args)...)));
  }
  /// Starts an actor of type T in the worker process of slot `where`, beside the pool's tasks
  /// there.
  template <class T, class... A>
  actor<T> spawn(in_slot where, A&&... args) {
    return spawn<T>(where, actor_options{}, std::forward<A>(args)...);
  }

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
};

/// A pool of worker processes running registered tasks.
using process_pool = basic_process_pool<void>;

/// A pool of worker processes that each own a context of type Ctx (a device, a model replica)
/// and call every task as f(ctx, args...) with it. The context lives in the worker process:
/// sent as a value, or made there by a registered factory; a replacement worker gets it again.
template <class Ctx>
using ctx_process_pool = basic_process_pool<Ctx>;

} // namespace troupe
