// push_pull_grad_server: asynchronous gradient averaging through reducers, with a two-level tree
// (machin's PushPullGradServer). Workers push gradients to a random secondary reducer and pull
// the newest parameters; each secondary reduces batches of gradients and sends the result to
// the primary, which reduces batches of those, steps the optimizer on the model it manages, and
// publishes the parameters as the next version.
//
//   troupe::grad_server_options options{.reduce_batch_size = 2};
//   troupe::push_pull_grad_server_host host{group, "grads", options};   // on every reducer
//   if (is_primary) { host.manage_model(model, [](state_dict& p, const state_dict& g) { ... }); }
//   host.start();
//   troupe::push_pull_grad_server server{group, "grads", options};      // on any member
//   server.push(model, gradients);        // queued at a reducer; then model gets the newest
//
// machin's rule: each level reduces reduce_batch_size gradients at once, so with a batch of B the
// model steps once every B * B pushes (a batch of 2: every 4th push). Pushes that wait longer
// than a second without a step are logged once on standard error; `flush_after` reduces what a
// reducer has once its oldest gradient waited that long.
//
// Better than machin: leftovers smaller than a batch are reduced after `flush_after`; stop()
// returns at once with work queued; a reducer that is gone makes a push try another; the
// learning-rate schedule given to manage_model runs after every optimizer step.
#pragma once

#include "troupe/servers/ordered_server.hpp"
#include "troupe/servers/push_pull_model_server.hpp"
#include "troupe/servers/state_dict.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <random>
#include <thread>
#include <vector>

namespace troupe {

enum class reduce_method { sum, mean };

/// How a gradient server is laid out and reduces: machin's PushPullGradServer's arguments.
struct grad_server_options {
  /// The key the parameters are published under.
  std::string model_name = "model";
  /// The member that steps the model and hosts its parameters. Empty: the group's first member.
  std::string primary;
  /// The members that take workers' pushes. Empty: every member of the group.
  std::vector<std::string> secondaries;
  /// How gradients are reduced: summed or averaged.
  reduce_method method = reduce_method::sum;
  /// Gradients reduced at once, at each level (more than 1).
  int reduce_batch_size = 4;
  /// Gradients a reducer keeps waiting, the oldest dropped beyond it (more than the batch).
  int max_queue_size = 64;
  /// Fewer gradients than a batch are reduced once the oldest has waited this long; without
  /// it they wait for the batch to fill (machin's behaviour).
  std::optional<std::chrono::milliseconds> flush_after;
  /// A client's push and pull each wait this long at most (timeout_error); none: as long as
  /// the reducers are in the world.
  std::optional<std::chrono::milliseconds> call_timeout;
};

/// Applies reduced gradients to the parameters (an optimizer's step).
using optimizer_step = std::function<void(state_dict& parameters, const state_dict& gradients)>;

/// The primary member's side of a gradient server: it hosts the model and the rule that applies a
/// reduced gradient, and steps the model as reduced gradients arrive.
class push_pull_grad_server_host {
public:
  /// On the primary and on every secondary reducer. invalid_argument for options machin
  /// refuses (a batch of 1 or less, a queue of 1 or less or not above the batch) or a
  /// reducer that is not a member.
  push_pull_grad_server_host(rpc_group group, std::string name, grad_server_options options = {});
  /// stop().
  ~push_pull_grad_server_host();
  push_pull_grad_server_host(const push_pull_grad_server_host&) = delete;
  push_pull_grad_server_host& operator=(const push_pull_grad_server_host&) = delete;

  /// Primary only (state_error elsewhere, or once started): the model the reduced gradients
  /// update, published now as its version; `step` applies gradients; `schedule`, if given, runs
  /// after each step (a learning-rate schedule: machin's lr_scheduler.step()). Both run on the
  /// reducer thread and must not call back into this host.
  void manage_model(versioned_model model, optimizer_step step,
                    std::function<void()> schedule = {});
  /// The managed model as it is now (primary).
  versioned_model model() const;
  /// Gradients waiting here, pushed by workers or sent by secondaries (a backlog to watch).
  std::size_t queued() const;

  /// Starts the reducer thread; stop() stops it at once, whatever is queued (which stays for
  /// a later start()).
  void start();
  /// Stops stepping the model; pushes after it are not applied.
  void stop() noexcept;
  /// Rethrows what stopped the reducer thread, if anything did.
  void watch();

private:
  struct queue {
    std::deque<std::pair<std::chrono::steady_clock::time_point, detail::blob>> items;
  };

  bool enqueue(int level, detail::blob gradients);
  void reduce_loop();
  /// The gradients to reduce now from `q` (a batch, or leftovers past flush_after); empty if
  /// none are due.
  std::vector<detail::blob> due(queue& q, std::chrono::steady_clock::time_point now);
  state_dict reduce(const std::vector<detail::blob>& batch) const;
  void step_model(const state_dict& gradients);
  /// Says once, on standard error, that gradients wait for a batch and how to reduce sooner.
  void warn_if_waiting(std::chrono::steady_clock::time_point now);

  rpc_group group_;
  const std::string name_;
  const grad_server_options options_;
  const bool primary_;
  std::unique_ptr<push_pull_model_server_host> parameters_host_; // primary only
  std::unique_ptr<ordered_server> parameters_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  queue secondary_queue_, primary_queue_;
  bool running_ = false;
  bool warned_waiting_ = false;
  std::exception_ptr failure_;
  std::thread reducer_;

  mutable std::mutex model_mutex_; // the managed model, apart from the queues
  versioned_model model_;
  optimizer_step step_;
  std::function<void()> schedule_;
};

/// A worker's side of a gradient server (machin's PushPullGradServer): pushes gradients and pulls
/// the newest parameters.
class push_pull_grad_server {
public:
  /// `options` must name the same primary and secondaries as the hosts'.
  push_pull_grad_server(rpc_group group, std::string name, grad_server_options options = {});

  /// Queues `gradients` at a random secondary reducer (another, if that one is gone: peer_lost
  /// only when none is left), then pulls the newest parameters into `model`; false if none
  /// were published yet.
  bool push(versioned_model& model, const state_dict& gradients);
  /// Loads the newest parameters into `model` if newer; false if none were published yet.
  bool pull(versioned_model& model);

private:
  rpc_group group_;
  std::string name_;
  std::vector<std::string> secondaries_;
  std::optional<std::chrono::milliseconds> timeout_;
  push_pull_model_server parameters_; // where the primary publishes them
  std::mt19937 random_{std::random_device{}()};
};

} // namespace troupe
