// ctx_thread_pool<Ctx>: a thread pool whose workers each own a context (a device handle, a model
// replica, a connection). Every task is called as `f(ctx, args...)` with the context of the
// worker running it; a worker runs one task at a time, so a context is never used by two tasks
// at once.
//
//   troupe::ctx_thread_pool<int> pool{rt, std::vector<int>{0, 1}};    // worker i owns context i
//   auto r = pool.map([](int& device, int x) { return run_on(device, x); }, xs);
//
//   troupe::ctx_thread_pool<model> replicas{rt, [](std::size_t i) { return model{i}; },
//                                           {.workers = 4}};
//
// A worker replaced under max_tasks_per_worker keeps its context.
#pragma once

#include "troupe/actors/runtime.hpp"
#include "troupe/pools/detail/thread_pool_jobs.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace troupe {

/// A thread pool whose workers each own a context (a device, a model replica), given first to every
/// task they run: f(ctx, args...) (machin's CtxPool). A worker runs one task at a time, so a
/// context is never used by two at once. Its calls are troupe::detail::pool_front's, each task
/// taking the context first.
template <class Ctx>
class ctx_thread_pool : public detail::basic_pool<detail::context_binder<Ctx>> {
  using base = detail::basic_pool<detail::context_binder<Ctx>>;

public:
  /// One worker per context. If `options.workers` is set it must equal contexts.size().
  ctx_thread_pool(runtime& rt, std::vector<Ctx> contexts, pool_options options = {})
    : ctx_thread_pool(adopt_tag{}, rt, own(std::move(contexts), options), options) {}

  /// `options.workers` workers (default: hardware threads), worker i owning `factory(i)`.
  /// The factory runs here, in the constructing thread.
  ctx_thread_pool(runtime& rt, const std::function<Ctx(std::size_t)>& factory,
                  pool_options options = {})
    : ctx_thread_pool(adopt_tag{}, rt, build(factory, options), options) {}

  ~ctx_thread_pool() {
    // Workers must stop before the contexts they use are destroyed.
    this->terminate();
    this->join();
  }

  /// The context of worker `index`.
  Ctx& context(std::size_t index) { return *contexts_.at(index); }

private:
  using owned = std::vector<std::unique_ptr<Ctx>>;
  struct adopt_tag {};

  // The contexts live on the heap, so the pointers the workers get stay valid when the vector
  // holding them moves into the member.
  ctx_thread_pool(adopt_tag, runtime& rt, owned contexts, const pool_options& options)
    : base(rt, with_workers(options, contexts.size()), pointers(contexts)),
      contexts_(std::move(contexts)) {}

  static owned own(std::vector<Ctx> contexts, const pool_options& options) {
    if (contexts.empty())
      throw invalid_argument("ctx_thread_pool needs at least one context, got none");
    if (options.workers && static_cast<std::size_t>(*options.workers) != contexts.size())
      throw invalid_argument("ctx_thread_pool: " + std::to_string(contexts.size()) +
                             " contexts given for " + std::to_string(*options.workers) +
                             " workers; there must be one context per worker");
    owned out;
    for (auto& c : contexts)
      out.push_back(std::make_unique<Ctx>(std::move(c)));
    return out;
  }

  static owned build(const std::function<Ctx(std::size_t)>& factory, const pool_options& options) {
    if (!factory)
      throw invalid_argument("ctx_thread_pool: the context factory is empty");
    owned out;
    const auto n = detail::worker_count(options);
    for (std::size_t i = 0; i < n; ++i)
      out.push_back(std::unique_ptr<Ctx>(new Ctx(factory(i))));
    return out;
  }

  static pool_options with_workers(pool_options options, std::size_t n) {
    options.workers = static_cast<int>(n);
    return options;
  }

  static std::vector<void*> pointers(const owned& contexts) {
    std::vector<void*> out;
    for (auto& c : contexts)
      out.push_back(c.get());
    return out;
  }

  owned contexts_;
};

} // namespace troupe
