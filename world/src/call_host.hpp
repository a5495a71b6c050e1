// What a way in for other members' calls needs of the member it serves: threads to run them on,
// the running itself, and members' names for its messages. The shared-memory channel
// (local_channel.hpp) serves through it, and world_core is it, so that neither of their headers
// includes the other.
#pragma once

#include "member_messages.hpp"

#include "troupe/world/detail/group_calls.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace troupe::detail {

/// A call from another member, as it arrived.
struct incoming_call {
  call_kind kind = call_kind::task;
  std::string key, name, type;
  wire_bytes payload;
  int from = -1; // the caller's rank, as its connection (or inbox) says
};

/// A served call's answer, before it travels.
struct served {
  /// Why the call failed; nothing (failed() false) when it ran: a task's own exception is in
  /// its outcome, in `payload`.
  failure why;
  bytes payload;
  /// The call is answered later, through the late answer it was given (an actor's call).
  bool deferred = false;
  /// A late answer's payload, made as it is sent: to a caller on this host, the large tensors
  /// in it go into the caller's reply inbox (set instead of `payload`).
  std::function<bytes()> encode;

  /// The call ran, and `outcome` is what it answers.
  static served ran(bytes outcome) { return {{}, std::move(outcome)}; }
  /// The call could not run: `why`.
  static served refused(failure why) { return {std::move(why), {}}; }
  /// The call answers later, through its late answer.
  static served later() { return {{}, {}, true}; }
  /// A late answer, encoded as it is sent.
  static served encoded_later(std::function<bytes()> encode) {
    return {{}, {}, false, std::move(encode)};
  }
  /// The answer could not be sent (`why`, the exception being handled): the caller hears that.
  void unsendable() {
    why = failure::of<state_error>("the answer could not be sent: " + current_failure().message);
    payload.clear();
  }
};

/// How a call that ends after run() returned is answered, from whatever thread ends it.
using late_answer = std::function<void(served)>;

class call_host {
public:
  virtual ~call_host() = default;
  /// Runs `work` on the executor (the threads that run other members' calls).
  virtual void post(std::function<void()> work) = 0;
  /// Runs a call from another member; what it answers (or, deferred, what it will answer
  /// through `later`).
  virtual served run(const std::string& group, incoming_call& request,
                     const late_answer& later) = 0;
  /// How call `id` of `rank`, come through the shared-memory inboxes, is answered late; it
  /// answers nothing once this member is gone.
  virtual late_answer late_local_answer(int rank, std::uint64_t id) = 0;
  /// "member 'name' (rank n)", or "rank n" while the world forms.
  virtual std::string label(int rank) const = 0;
};

} // namespace troupe::detail
