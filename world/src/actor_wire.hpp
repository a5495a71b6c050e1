// What travels for actors on world members, besides a call's request fields.
#pragma once

#include "troupe/actors/task.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace troupe::detail {

/// The key an actor's name is registered under in rank 0's table of a group's paired keys, so
/// that any member finds the member it runs on (rpc_group::actor).
inline std::string actor_name_key(const std::string& name) { return "troupe.actor/" + name; }

/// An actor_spawn's payload: the constructor's arguments, the bound on the host's mailbox, for
/// a restart the member that was lost (rank 0 may not have seen the loss yet, and still hold the
/// name for it), and whether the spawner restarts it (which handles that find it learn).
struct actor_spawn_request {
  std::vector<std::byte> constructor;
  std::uint64_t max_mailbox = 0;
  std::int32_t replaces = -1;
  bool restartable = false;
  std::uint32_t max_call_retries = 0;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(constructor, max_mailbox, replaces, restartable, max_call_retries);
  }
};

/// An actor_resolve's answer: the incarnation running, whether its spawner restarts it, and how
/// often an idempotent call to it may go again (restart_policy::max_call_retries).
struct actor_found {
  std::uint64_t incarnation = 0;
  bool restartable = false;
  std::uint32_t max_call_retries = 0;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(incarnation, restartable, max_call_retries);
  }
};

/// An actor_call's payload: which incarnation it is for, which handle sent it and its place
/// among that handle's calls (so the host runs each handle's calls in the order it sent them,
/// whatever order they arrive in), and the method's arguments.
struct actor_call_envelope {
  std::uint64_t incarnation = 0;
  std::uint64_t handle = 0;
  std::uint64_t seq = 0;
  std::vector<std::byte> arguments;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(incarnation, handle, seq, arguments);
  }
};

/// An actor_call's answer: the method's outcome (its result, or the exception it threw), or why
/// the call never ran (the actor stopped, its mailbox was full, ...).
struct actor_reply {
  std::optional<call_failure> failure;
  std::vector<std::byte> outcomes;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(failure, outcomes);
  }
};

/// `why` as a call's failure travels.
call_failure failure_of(const std::exception_ptr& why);

/// The outcome of a call of result type V that failed with `why`, as a task's invoker encodes
/// one.
template <class V>
std::vector<std::byte> failed_as(const std::exception_ptr& why) {
  chunk_outcomes<V> outcome;
  outcome.second.push_back(failure_of(why));
  return serialize(outcome);
}

} // namespace troupe::detail
