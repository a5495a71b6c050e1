#include "troupe/pools/detail/pool_core.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "process_engine.hpp"
#include "thread/thread_workers.hpp"

#include "troupe/queues/shm_segment.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/actors/runtime_state.hpp"

#include <string>
#include <thread>

namespace troupe {

namespace detail {

std::size_t worker_count(const pool_options& options) {
  if (!options.workers)
    return std::max(1u, std::thread::hardware_concurrency());
  if (*options.workers < 1)
    throw invalid_argument("pool_options::workers must be at least 1, got " +
                           std::to_string(*options.workers));
  return static_cast<std::size_t>(*options.workers);
}

std::size_t chunk_size_for(std::optional<std::ptrdiff_t> requested, std::size_t items,
                           std::size_t workers) {
  if (requested) {
    if (*requested < 1)
      throw invalid_argument("chunksize must be at least 1, got " + std::to_string(*requested));
    return static_cast<std::size_t>(*requested);
  }
  const auto share = 4 * workers;
  return std::max<std::size_t>(1, (items + share - 1) / share);
}

namespace {

void check_max_tasks(const std::optional<std::size_t>& max_tasks) {
  if (max_tasks && *max_tasks == 0)
    throw invalid_argument("pool_options::max_tasks_per_worker must be at least 1, got 0");
}

thread_setup setup_from(const pool_options& options, std::vector<void*> contexts) {
  thread_setup setup;
  setup.workers = worker_count(options);
  if (!contexts.empty() && contexts.size() != setup.workers)
    throw invalid_argument("pool has " + std::to_string(setup.workers) + " workers but " +
                           std::to_string(contexts.size()) + " contexts");
  check_max_tasks(options.max_tasks_per_worker);
  setup.initializer = options.initializer;
  setup.max_tasks = options.max_tasks_per_worker.value_or(0);
  setup.contexts = std::move(contexts);
  return setup;
}

} // namespace

/// The engine that runs the pool's jobs, and (for a process pool) the same engine as a process
/// pool's, for what only process pools do.
struct pool_core::impl {
  std::unique_ptr<pool_engine> engine;
  process_engine* process = nullptr;

  process_engine& process_pool() const {
    if (process == nullptr)
      throw state_error("a thread pool spawns no actor: use troupe::spawn for one in this process");
    return *process;
  }
};

pool_core::pool_core(runtime& rt, const pool_options& options, std::vector<void*> contexts)
  : impl_(std::make_unique<impl>()) {
  impl_->engine = std::make_unique<thread_workers>(runtime_state_of(rt),
                                                   setup_from(options, std::move(contexts)));
}

namespace {

/// Room for a request's own fields and a small value: a smaller limit would refuse everything.
constexpr std::size_t min_message_bytes = 64 << 10;

worker_setup setup_from(const process_pool_options& options, context_settings contexts) {
  worker_setup setup;
  pool_options common;
  common.workers = options.workers;
  setup.workers = worker_count(common);
  check_max_tasks(options.max_tasks_per_worker);
  setup.max_tasks = options.max_tasks_per_worker.value_or(0);
  if (options.heartbeat_timeout <= std::chrono::milliseconds{0})
    throw invalid_argument("process_pool_options::heartbeat_timeout must be positive, got " +
                           readable(options.heartbeat_timeout));
  auto settings = std::make_shared<process_settings>();
  settings->initializer = options.initializer;
  settings->max_retries = options.max_retries;
  settings->heartbeat_timeout = options.heartbeat_timeout;
  if (options.startup_timeout <= std::chrono::milliseconds{0})
    throw invalid_argument("process_pool_options::startup_timeout must be positive, got " +
                           readable(options.startup_timeout));
  settings->startup_timeout = options.startup_timeout;
  if (options.max_message_bytes != 0 && options.max_message_bytes < min_message_bytes)
    throw invalid_argument("process_pool_options::max_message_bytes must be 0 or at least " +
                           std::to_string(min_message_bytes) + ", got " +
                           std::to_string(options.max_message_bytes));
  settings->max_message_bytes = options.max_message_bytes;
  settings->context_factory = std::move(contexts.factory);
  settings->context_type = std::move(contexts.type);
  settings->context_values = std::move(contexts.values);
  setup.process = std::move(settings);
  return setup;
}

} // namespace

pool_core::pool_core(runtime& rt, const process_pool_options& options, context_settings contexts)
  : impl_(std::make_unique<impl>()) {
  collect_orphan_segments(); // what pools killed before they could clean up left
  auto engine = std::make_unique<process_engine>(rt, setup_from(options, std::move(contexts)));
  engine->listen(options);
  impl_->process = engine.get();
  impl_->engine = std::move(engine);
}

pool_core::~pool_core() = default;

void pool_core::submit(job_ptr job) { impl_->engine->submit(std::move(job)); }

void pool_core::wake() { impl_->engine->wake(); }

void pool_core::cancel(job_ptr job) { impl_->engine->cancel(std::move(job)); }

void pool_core::close() { impl_->engine->close(); }

void pool_core::terminate() { impl_->engine->terminate(); }

void pool_core::join() { impl_->engine->join(); }

std::size_t pool_core::size() const noexcept { return impl_->engine->size(); }

std::vector<int> pool_core::worker_pids() const {
  return impl_->process != nullptr ? impl_->process->worker_pids() : std::vector<int>{};
}

std::vector<worker_stats> pool_core::stats() const { return impl_->engine->stats(); }

std::uint16_t pool_core::listen_port() const noexcept {
  return impl_->process != nullptr ? impl_->process->listen_port() : 0;
}

std::shared_ptr<actor_core> pool_core::spawn_actor(actor_options options, std::string type,
                                                   std::vector<std::byte> constructor) {
  return impl_->process_pool().spawn_actor(std::move(options), std::move(type),
                                           std::move(constructor));
}

std::shared_ptr<actor_core> pool_core::spawn_actor_in_slot(std::size_t slot, actor_options options,
                                                           std::string type,
                                                           std::vector<std::byte> constructor) {
  return impl_->process_pool().spawn_actor_in_slot(slot, std::move(options), std::move(type),
                                                   std::move(constructor));
}

} // namespace detail

} // namespace troupe
