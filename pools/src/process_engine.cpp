#include "process_engine.hpp"

#include "process/process_actor.hpp"

#include "troupe/actors/error.hpp"

#include <caf/all.hpp>

namespace troupe::detail {

process_engine::process_engine(runtime& rt, worker_setup setup)
  : rt_(rt), rt_state_(runtime_state_of(rt)), registry_(rt_state_.services),
    workers_(setup.workers), max_tasks_(setup.max_tasks), nodes_(setup.nodes), slots_(setup.slots),
    process_(setup.process), placements_(setup.placements) {
  registry_->add(this);
  setup.actor_threads = rt_state_.actor_threads;
  auto dispatcher = spawn_dispatcher(*rt_state_.system, std::move(setup), stopped_);
  dispatcher_ = std::move(dispatcher.actor);
  table_ = std::move(dispatcher.table);
  // An actor placed in a slot goes to the slot's worker actor, which hands it to its process.
  placements_->on_added(
    [this](std::size_t slot) { send_while(pool_state::running, place_atom::value, slot); });
}

process_engine::~process_engine() {
  if (registry_->remove(this))
    stop();
}

void process_engine::listen(const process_pool_options& options) {
  if (options.remote_secret.empty() && !options.tls)
    return;
  listener_ =
    std::make_unique<node_gate>(rt_state_, options, [this](std::shared_ptr<worker_link> node) {
      send_while(pool_state::running, join_atom::value, std::move(node));
    });
}

void process_engine::stop() noexcept {
  listener_.reset(); // no node joins a pool that is going away
  terminate();
  stopped_->wait();
  release_slots(*table_);
  std::unique_lock guard{mutex_};
  dispatcher_ = nullptr; // the system may go away next: hold no handle into it
}

template <class... Ts>
bool process_engine::send_while(pool_state allowed_until, Ts&&... message) {
  std::shared_lock guard{mutex_};
  if (state_ > allowed_until)
    return false;
  send_from_outside(dispatcher_, std::forward<Ts>(message)...);
  return true;
}

void process_engine::stop_placing(const char* why) noexcept {
  try {
    placements_->close(why);
  } catch (...) { // a string's allocation: the pool's end must not fail with it
    report_escaped_exception("closing a pool's actor placements");
  }
}

void process_engine::submit(job_ptr job) {
  {
    std::shared_lock guard{mutex_};
    if (state_ != pool_state::running)
      throw pool_closed(state_ == pool_state::closed
                          ? "the pool is closed: it accepts no new work"
                          : "the pool is terminated: it accepts no new work");
    if (job->chunk_count() == 0) {
      job->complete_if_empty();
      return;
    }
    switch (submit_directly(*table_, job)) {
    case direct_submit::taken: return;
    case direct_submit::refused:
      send_from_outside(dispatcher_, submit_atom::value, std::move(job));
      return;
    case direct_submit::broken:
      break; // as when the dispatcher's own bookkeeping throws: nothing may wait for ever
    }
  }
  terminate(); // the job, in the backlog, fails with the rest
}

void process_engine::wake() { send_while(pool_state::closed, wake_atom::value); }

void process_engine::cancel(job_ptr job) {
  send_while(pool_state::closed, cancel_atom::value, std::move(job));
}

void process_engine::close() {
  stop_placing("the pool was closed");
  std::unique_lock guard{mutex_};
  if (state_ != pool_state::running)
    return;
  state_ = pool_state::closed;
  send_from_outside(dispatcher_, close_atom::value);
}

void process_engine::terminate() {
  stop_placing("the pool was terminated");
  std::unique_lock guard{mutex_};
  if (state_ == pool_state::terminated)
    return;
  state_ = pool_state::terminated;
  send_from_outside(dispatcher_, terminate_atom::value);
}

void process_engine::join() {
  {
    std::shared_lock guard{mutex_};
    if (state_ == pool_state::running)
      throw state_error("join() on a running pool: call close() or terminate() first");
  }
  stopped_->wait();
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

std::shared_ptr<actor_core> process_engine::spawn_actor(actor_options options, std::string type,
                                                        std::vector<std::byte> constructor) {
  check_restart_placement(options);
  return spawn_process_actor(rt_, process_, std::move(options), std::move(type),
                             std::move(constructor));
}

std::shared_ptr<actor_core>
process_engine::spawn_actor_in_slot(std::size_t slot, actor_options options, std::string type,
                                    std::vector<std::byte> constructor) {
  if (slot >= workers_)
    throw invalid_argument("in_slot{" + std::to_string(slot) + "}: the pool's worker processes " +
                           "are slots 0 to " + std::to_string(workers_ - 1) +
                           " (a node from another host takes no actor)");
  check_restart_placement(options);
  if (max_tasks_ != 0)
    throw invalid_argument("in_slot: this pool replaces its workers after " +
                           std::to_string(max_tasks_) +
                           " tasks (max_tasks_per_worker), and an actor in a slot lives in its "
                           "worker's process: spawn it in a process of its own instead");
  return detail::spawn_actor_in_slot(rt_, {slot, process_, placements_}, std::move(options),
                                     std::move(type), std::move(constructor));
}

} // namespace troupe::detail
