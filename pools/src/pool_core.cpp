#include "troupe/pools/detail/pool_core.hpp"

#include "actors.hpp"
#include "process/process_actor.hpp"
#include "remote/node_link.hpp"

#include "troupe/queues/shm_segment.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/actors/runtime_state.hpp"

#include <caf/all.hpp>

#include <iostream>
#include <shared_mutex>
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

enum class pool_state { running, closed, terminated };

worker_setup setup_from(const pool_options& options, std::vector<void*> contexts) {
  worker_setup setup;
  setup.workers = worker_count(options);
  if (!contexts.empty() && contexts.size() != setup.workers)
    throw invalid_argument("pool has " + std::to_string(setup.workers) + " workers but " +
                           std::to_string(contexts.size()) + " contexts");
  if (options.max_tasks_per_worker && *options.max_tasks_per_worker == 0)
    throw invalid_argument("pool_options::max_tasks_per_worker must be at least 1, got 0");
  setup.initializer = options.initializer;
  setup.max_tasks = options.max_tasks_per_worker.value_or(0);
  setup.contexts = std::move(contexts);
  return setup;
}

} // namespace

struct pool_core::impl final : service {
  impl(runtime& rt, worker_setup setup)
    : rt(rt), rt_state(runtime_state_of(rt)), registry(rt_state.services), workers(setup.workers),
      max_tasks(setup.max_tasks), nodes(setup.nodes), slots(setup.slots), process(setup.process),
      placements(setup.placements) {
    registry->add(this);
    dispatcher = spawn_dispatcher(*runtime_state_of(rt).system, std::move(setup), stopped);
    // An actor placed in a slot goes to the slot's worker actor, which hands it to its process.
    placements->on_added(
      [this](std::size_t slot) { send_while(pool_state::running, place_atom::value, slot); });
  }

  ~impl() override {
    if (registry->remove(this))
      stop();
  }

  void shutdown() noexcept override { stop(); }

  /// Takes worker nodes from other hosts (process pools with a remote secret).
  void listen(const process_pool_options& options) {
    if (options.remote_secret.empty() && !options.tls)
      return;
    listener =
      std::make_unique<node_gate>(rt_state, options, [this](std::shared_ptr<worker_link> node) {
        send_while(pool_state::running, join_atom::value, std::move(node));
      });
  }

  void stop() noexcept {
    listener.reset(); // no node joins a pool that is going away
    terminate();
    stopped->wait();
    std::unique_lock guard{mutex};
    dispatcher = nullptr; // the system may go away next: hold no handle into it
  }

  /// Sends `message` unless the pool is past `allowed_until`; true if sent.
  template <class... Ts>
  bool send_while(pool_state allowed_until, Ts&&... message) {
    std::shared_lock guard{mutex};
    if (state > allowed_until)
      return false;
    send_from_outside(dispatcher, std::forward<Ts>(message)...);
    return true;
  }

  /// No more actors are placed in slots (before the pool's lock: see slot_placements).
  void stop_placing(const char* why) noexcept {
    try {
      placements->close(why);
    } catch (...) { // a string's allocation: the pool's end must not fail with it
      report_escaped_exception("closing a pool's actor placements");
    }
  }

  void terminate() noexcept {
    stop_placing("the pool was terminated");
    std::unique_lock guard{mutex};
    if (state == pool_state::terminated)
      return;
    state = pool_state::terminated;
    send_from_outside(dispatcher, terminate_atom::value);
  }

  runtime& rt;
  runtime_state& rt_state;
  std::shared_ptr<service_registry> registry;
  std::size_t workers;
  std::size_t max_tasks; // 0: workers are never replaced for having done enough
  std::shared_ptr<std::atomic<std::size_t>> nodes;
  std::shared_ptr<slot_registry> slots;
  std::shared_ptr<const process_settings> process; // a process pool's
  std::shared_ptr<slot_placements> placements;
  std::unique_ptr<node_gate> listener;
  std::shared_ptr<stop_signal> stopped = std::make_shared<stop_signal>();
  // Guards `state` and orders messages: a submit that saw `running` is in the dispatcher's
  // mailbox before the close or terminate that follows it.
  std::shared_mutex mutex;
  pool_state state = pool_state::running;
  dispatcher_actor dispatcher;
};

pool_core::pool_core(runtime& rt, const pool_options& options, std::vector<void*> contexts)
  : impl_(std::make_unique<impl>(rt, setup_from(options, std::move(contexts)))) {}

namespace {

/// Room for a request's own fields and a small value: a smaller limit would refuse everything.
constexpr std::size_t min_message_bytes = 64 << 10;

worker_setup setup_from(const process_pool_options& options, context_settings contexts) {
  pool_options common;
  common.workers = options.workers;
  common.max_tasks_per_worker = options.max_tasks_per_worker;
  auto setup = setup_from(common, {});
  if (options.heartbeat_timeout <= std::chrono::milliseconds{0})
    throw invalid_argument("process_pool_options::heartbeat_timeout must be positive, got " +
                           std::to_string(options.heartbeat_timeout.count()) + " ms");
  auto settings = std::make_shared<process_settings>();
  settings->initializer = options.initializer;
  settings->max_retries = options.max_retries;
  settings->heartbeat_timeout = options.heartbeat_timeout;
  if (options.startup_timeout <= std::chrono::milliseconds{0})
    throw invalid_argument("process_pool_options::startup_timeout must be positive, got " +
                           std::to_string(options.startup_timeout.count()) + " ms");
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
  : impl_((collect_orphan_segments(), // what pools killed before they could clean up left
           std::make_unique<impl>(rt, setup_from(options, std::move(contexts))))) {
  impl_->listen(options);
}

pool_core::~pool_core() = default;

void pool_core::submit(job_ptr job) {
  std::shared_lock guard{impl_->mutex};
  if (impl_->state != pool_state::running)
    throw pool_closed(impl_->state == pool_state::closed
                        ? "the pool is closed: it accepts no new work"
                        : "the pool is terminated: it accepts no new work");
  if (job->chunk_count() == 0) {
    job->complete_if_empty();
    return;
  }
  send_from_outside(impl_->dispatcher, submit_atom::value, std::move(job));
}

void pool_core::wake() { impl_->send_while(pool_state::closed, wake_atom::value); }

void pool_core::cancel(job_ptr job) {
  impl_->send_while(pool_state::closed, cancel_atom::value, std::move(job));
}

void pool_core::close() {
  impl_->stop_placing("the pool was closed");
  std::unique_lock guard{impl_->mutex};
  if (impl_->state != pool_state::running)
    return;
  impl_->state = pool_state::closed;
  send_from_outside(impl_->dispatcher, close_atom::value);
}

void pool_core::terminate() { impl_->terminate(); }

void pool_core::join() {
  {
    std::shared_lock guard{impl_->mutex};
    if (impl_->state == pool_state::running)
      throw state_error("join() on a running pool: call close() or terminate() first");
  }
  impl_->stopped->wait();
}

std::size_t pool_core::size() const noexcept { return impl_->workers + impl_->nodes->load(); }

std::vector<int> pool_core::worker_pids() const { return impl_->slots->pids(); }

std::vector<worker_stats> pool_core::stats() const { return impl_->slots->stats(size()); }

std::uint16_t pool_core::listen_port() const noexcept {
  return impl_->listener ? impl_->listener->port() : 0;
}

namespace {

/// A worker process's actor restarts in a new process, never on a member.
void check_restart_placement(const actor_options& options) {
  if (!options.restart.members.empty())
    throw invalid_argument("actor '" + options.name +
                           "': restart_policy::members names world members; an actor in a "
                           "worker process restarts in a new one");
}

} // namespace

std::shared_ptr<actor_core> pool_core::spawn_actor(actor_options options, std::string type,
                                                   std::vector<std::byte> constructor) {
  if (!impl_->process)
    throw state_error("a thread pool spawns no actor: use troupe::spawn for one in this process");
  check_restart_placement(options);
  return spawn_process_actor(impl_->rt, impl_->process, std::move(options), std::move(type),
                             std::move(constructor));
}

std::shared_ptr<actor_core> pool_core::spawn_actor_in_slot(std::size_t slot, actor_options options,
                                                           std::string type,
                                                           std::vector<std::byte> constructor) {
  if (!impl_->process)
    throw state_error("a thread pool spawns no actor: use troupe::spawn for one in this process");
  if (slot >= impl_->workers)
    throw invalid_argument("in_slot{" + std::to_string(slot) + "}: the pool's worker processes " +
                           "are slots 0 to " + std::to_string(impl_->workers - 1) +
                           " (a node from another host takes no actor)");
  check_restart_placement(options);
  if (impl_->max_tasks != 0)
    throw invalid_argument("in_slot: this pool replaces its workers after " +
                           std::to_string(impl_->max_tasks) +
                           " tasks (max_tasks_per_worker), and an actor in a slot lives in its "
                           "worker's process: spawn it in a process of its own instead");
  return detail::spawn_actor_in_slot(impl_->rt, {slot, impl_->process, impl_->placements},
                                     std::move(options), std::move(type), std::move(constructor));
}

} // namespace detail

} // namespace troupe
