// The answer a member owes another for one call it made here.
#pragma once

#include "member_messages.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace troupe::detail {

/// The executor thread that ran the call sends its answer straight to the caller, not through
/// the member actor: one thread hand-off less on every call. The member actor answers instead
/// when it refuses the call or stops first. Whichever comes first answers; the other finds it
/// answered.
class call_answer {
public:
  call_answer() = default;
  /// The answer to a request (a call through the caller's member actor): `promise`, made by the
  /// member actor for the call being handled, is answered as `answerer`'s, an actor whose
  /// execution context never changes (a promise naming the member actor would read that actor's
  /// context on another thread).
  call_answer(caf::response_promise& promise, caf::strong_actor_ptr answerer);
  /// The answer to a one-way call `id` (direct_calls.hpp): a one-way message to `caller` in the
  /// name of this member's actor `self`, which the caller checks.
  call_answer(caf::actor self, caf::strong_actor_ptr caller, std::uint64_t id);

  /// Sends `why`, or (nothing failed) `payload`, unless answered already; from any thread.
  void deliver(const failure& why, wire_bytes payload = {});

private:
  struct owed {
    std::atomic<bool> answered{false};
    caf::response_promise promise;
    caf::actor self;
    caf::strong_actor_ptr caller;
    std::uint64_t id = 0;
  };
  std::shared_ptr<owed> owed_;
};

} // namespace troupe::detail
