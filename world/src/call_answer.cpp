#include "call_answer.hpp"

#include "troupe/actors/annotated.hpp"

namespace troupe::detail {

call_answer::call_answer(caf::response_promise& promise, caf::strong_actor_ptr answerer)
  : owed_{std::make_shared<owed>()} {
  owed_->promise =
    caf::response_promise{std::move(answerer), promise.source(), promise.stages(), promise.id()};
}

call_answer::call_answer(caf::actor self, caf::strong_actor_ptr caller, std::uint64_t id)
  : owed_{std::make_shared<owed>()} {
  owed_->self = std::move(self);
  owed_->caller = std::move(caller);
  owed_->id = id;
}

void call_answer::deliver(const failure& why, wire_bytes payload) {
  if (!owed_ || owed_->answered.exchange(true))
    return;
  if (owed_->promise.pending()) {
    owed_->promise.deliver(wire_status(why), why.message, std::move(payload));
    return;
  }
  if (owed_->caller)
    answer_message::send_from_outside(owed_->self, caf::actor_cast<caf::actor>(owed_->caller),
                                      owed_->id, wire_status(why), why.message, std::move(payload));
  owed_->self = nullptr; // handles held past the world's stop would keep CAF from shutting down
  owed_->caller = nullptr;
}

} // namespace troupe::detail
