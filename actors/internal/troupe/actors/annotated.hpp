// Sends and handlers annotated for ThreadSanitizer (see tsan.hpp): every message troupe sends
// releases on its receiver's mailbox, and every handler acquires on its own actor while it
// runs, so what a sender did before sending happened before the handler that reads it. Outside
// TSAN builds these are plain sends. Not installed: it includes CAF.
#pragma once

#include "troupe/actors/tsan.hpp"

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>

#include <utility>

namespace troupe::detail {

/// The address TSAN builds synchronize a mailbox on (see troupe/actors/tsan.hpp).
template <class Handle>
const void* mailbox_of(const Handle& receiver) {
  return caf::actor_cast<caf::abstract_actor*>(receiver);
}

/// Sends from outside any actor.
template <class Handle, class... Ts>
void send_from_outside(const Handle& receiver, Ts&&... message) {
  tsan_release(mailbox_of(receiver));
  caf::anon_send(receiver, std::forward<Ts>(message)...);
}

/// Sends from outside any actor, in the name of actor `as` (its receiver sees `as` send it).
template <class As, class Handle, class... Ts>
void send_as_from_outside(const As& as, const Handle& receiver, Ts&&... message) {
  tsan_release(mailbox_of(receiver));
  caf::send_as(as, receiver, std::forward<Ts>(message)...);
}

/// Sends from inside an actor.
template <class Self, class Handle, class... Ts>
void send_from(Self* self, const Handle& receiver, Ts&&... message) {
  tsan_release(mailbox_of(receiver));
  self->send(receiver, std::forward<Ts>(message)...);
}

/// Held for the whole of every handler: what senders did before sending, and what this actor
/// did in its previous handler (perhaps on another scheduler thread), happened before it.
class handling {
public:
  explicit handling(caf::abstract_actor* self) : self_(self) { tsan_acquire(self_); }
  ~handling() { tsan_release(self_); }
  handling(const handling&) = delete;
  handling& operator=(const handling&) = delete;

private:
  caf::abstract_actor* self_;
};

} // namespace troupe::detail
