#include "process/relay_host.hpp"

#include "troupe/actors/async_result.hpp"
#include "troupe/actors/detail/tensor_store.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/actors/travelled_actors.hpp"

#include <atomic>
#include <chrono>

namespace troupe::detail {

namespace {

/// How long an answer waits for room in a worker's answer queue: a worker that reads none is
/// gone or stuck, and its answers are dropped rather than held.
constexpr auto answer_wait = std::chrono::seconds{1};

/// A call from a worker process, in its actor's mailbox; answered once, whatever ends it.
class relayed_call final : public actor_call {
public:
  relayed_call(relay_call call, std::shared_ptr<queue<reply_batch>> answers, std::string actor)
    : call_(std::move(call)), answers_(std::move(answers)), actor_(std::move(actor)) {}
  ~relayed_call() override {
    if (!answered_)
      fail(stopped_before_running(actor_));
  }

  /// An actor in this process runs it here, on its thread.
  void run(void* object) noexcept override {
    try {
      const auto* invoker = task_registry::instance().find_context_task(call_.method);
      if (invoker == nullptr)
        throw invalid_argument("no actor method " + call_.method + " in this program");
      tensor_store_pause inline_tensors; // the answer travels in the message
      answer({call_.id, {}, (*invoker)(object, call_.arguments)});
    } catch (...) {
      fail(std::current_exception());
    }
  }
  void fail(std::exception_ptr why) noexcept override {
    try {
      std::rethrow_exception(why);
    } catch (...) {
      answer({call_.id, current_failure(), {}});
    }
  }
  /// An actor in another worker process answered: its outcomes go on, re-encoded inline.
  void settle(std::span<const std::byte> outcomes, const std::string&) noexcept override {
    try {
      const auto* transcode = task_registry::instance().find_outcome_transcoder(call_.method);
      if (transcode == nullptr)
        throw invalid_argument("no actor method " + call_.method + " in this program");
      answer({call_.id, {}, (*transcode)(outcomes)});
    } catch (...) {
      fail(std::current_exception());
    }
  }
  std::string method_key() const override { return call_.method; }
  std::vector<std::byte> encode() const override { return call_.arguments; }

private:
  void answer(chunk_reply reply) noexcept {
    if (answered_.exchange(true))
      return;
    try {
      reply_batch batch;
      batch.chunks.push_back(std::move(reply));
      answers_->put(batch, answer_wait);
    } catch (...) {
      // the worker is gone, or reads nothing: nobody waits for this answer
    }
  }

  relay_call call_;
  std::shared_ptr<queue<reply_batch>> answers_;
  std::string actor_;
  std::atomic<bool> answered_{false};
};

} // namespace

namespace {

/// Puts one call into its actor's mailbox, or has it answered at once why it cannot go there.
void relay_one(relay_call call, const std::shared_ptr<queue<reply_batch>>& answers,
               const std::string& worker) {
  const auto found = find_travelled(call.actor);
  if (call.method.empty()) { // stop(), which nobody waits on
    if (found.core)
      found.core->stop();
    return;
  }
  const auto name = found.core ? *found.core->name() : std::string{"actor"};
  auto relayed = std::make_shared<relayed_call>(std::move(call), answers, name);
  if (!found.core) {
    relayed->fail(std::make_exception_ptr(
      actor_stopped("the actor " + worker +
                    " called is gone: every handle to it in its own process was "
                    "dropped")));
    return;
  }
  const auto method = relayed->method_key();
  if (method.rfind(found.type + "#", 0) != 0) {
    relayed->fail(std::make_exception_ptr(invalid_argument("actor '" + name + "' (" + found.type +
                                                           ") has no method " + method +
                                                           ", which " + worker + " called")));
    return;
  }
  try {
    found.core->enqueue(relayed);
  } catch (...) { // its mailbox full past its timeout, or it stopped
    relayed->fail(std::current_exception());
  }
}

} // namespace

void relay_calls(std::vector<relay_call>& calls, const std::shared_ptr<queue<reply_batch>>& answers,
                 const std::string& worker) noexcept {
  for (auto& call : calls) {
    const auto id = call.id;
    try {
      relay_one(std::move(call), answers, worker);
    } catch (...) { // memory ran out, say: the worker still hears, rather than waits for ever
      auto why = current_failure();
      try {
        reply_batch batch;
        batch.chunks.push_back({id, std::move(why), {}});
        answers->put(batch, answer_wait);
      } catch (...) {
        report_escaped_exception("relaying a call from " + worker);
      }
    }
  }
  calls.clear();
}

} // namespace troupe::detail
