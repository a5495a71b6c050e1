// thread_pool: a pool of worker threads (typed CAF actors, each on a thread of its own) that run
// any callable, with the API of Python's multiprocessing.Pool.
//
//   troupe::runtime rt{argc, argv};
//   troupe::thread_pool pool{rt, {.workers = 4}};
//   std::vector<int> ys = pool.map([](int x) { return x * x; }, xs);
//   for (int y : pool.imap_unordered(slow_square, xs)) ...
//   auto r = pool.apply_async(slow_square, 7);            // troupe::async_result<int>
//   int v = r.get(std::chrono::seconds{1});               // or troupe::timeout_error
//
// All members are safe to call from several threads at once. A callable is shared by the
// workers that run it, so it must tolerate concurrent calls. The destructor terminates the pool
// (work not yet started fails with troupe::pool_closed) and waits for running tasks to finish.
#pragma once

#include "troupe/actors/runtime.hpp"
#include "troupe/pools/detail/thread_pool_jobs.hpp"

namespace troupe {

/// A pool of worker threads with the API and semantics of multiprocessing.Pool: apply, apply_async,
/// map, imap, imap_unordered, starmap, close, join, terminate. Workers are threads of their own, so
/// a blocking task starves no other pool. Its calls are troupe::detail::pool_front's.
class thread_pool : public detail::basic_pool<detail::plain_binder> {
public:
  /// A pool of `options.workers` threads on `rt`.
  explicit thread_pool(runtime& rt, const pool_options& options = {}) : basic_pool(rt, options) {}
};

} // namespace troupe
