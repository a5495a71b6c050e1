// What this member does for a call from another, on an executor thread: run a task or a service,
// run a task on a paired value, keep an outcome or hand one out, and spawn, find, call or stop an
// actor hosted here. What it holds for the others and the actors are its tables, each with its
// own lock.
#pragma once

#include "call_host.hpp"
#include "coordinator.hpp"
#include "held_values.hpp"
#include "hosted_actors.hpp"

#include <chrono>
#include <functional>
#include <string>

namespace troupe::detail {

class served_calls {
public:
  /// Asks rank 0 for `op` on a group's paired keys (an actor's name there), waiting for its
  /// answer; throws what rank 0 answers (key_error for a name taken).
  using rank0_keys =
    std::function<void(key_operation op, const std::string& group, const std::string& key)>;
  /// `label` names a member (world_core::label), for messages.
  served_calls(runtime_state& rt, int rank, std::chrono::milliseconds timeout,
               std::function<std::string(int)> label, rank0_keys ask_rank0)
    : actors(rt), rank_(rank), timeout_(timeout), label_(std::move(label)),
      ask_rank0_(std::move(ask_rank0)) {}

  /// Runs a call from another member; what it answers (or, deferred, what it will answer
  /// through `later`).
  served run(const std::string& group, incoming_call& request, const late_answer& later);

  /// What this member holds for others, by (group, key).
  held_values held;
  /// The actors other members spawned here.
  hosted_actors actors;

private:
  served run_invoker(const std::string& group, const incoming_call& request);
  served run_actor_call(const std::string& group, incoming_call& request, const late_answer& later);
  /// Adds an actor's name to rank 0's table of the group's keys; for the restart of an actor
  /// whose member `replaces` was lost (-1: none), waits for rank 0 to let the name go.
  void claim_actor_name(const std::string& group, const std::string& name, int replaces);
  void withdraw_actor_name(const std::string& group, const std::string& name);

  const int rank_;
  const std::chrono::milliseconds timeout_;
  const std::function<std::string(int)> label_;
  const rank0_keys ask_rank0_;
};

} // namespace troupe::detail
