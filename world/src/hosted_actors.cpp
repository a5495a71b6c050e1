#include "hosted_actors.hpp"

#include "troupe/actors/local_actor.hpp"
#include "troupe/actors/serialization.hpp"
#include "troupe/actors/task.hpp"

#include <random>
#include <utility>

namespace troupe::detail {

namespace {

/// Calls one actor holds back at most, waiting for the calls before them: a peer that skips
/// numbers cannot make the host keep calls without bound.
constexpr std::size_t max_parked = 4096;
/// Actors one member runs for the others at most: each has a thread of its own, and no peer
/// may make a member start threads without bound.
constexpr std::size_t max_hosted = 1024;

/// A call from another member, its arguments decoded as it arrived, run on the actor's object
/// and answered from the actor's thread.
class prepared_actor_call final : public actor_call {
public:
  prepared_actor_call(prepared_call prepared, actor_answer answer, const std::string& actor)
    : prepared_(std::move(prepared)), answer_(std::move(answer)), actor_(actor) {}
  ~prepared_actor_call() override {
    if (answer_)
      deliver([why = stopped_before_running(actor_)] { return failed_outcome(why); });
  }

  void run(void* object) noexcept override {
    outcome_encoder outcome;
    try {
      outcome = prepared_(object); // the method's own exception is in it
    } catch (...) {
      fail(std::current_exception());
      return;
    }
    deliver([outcome = std::move(outcome)] {
      return serialize(actor_reply{std::nullopt, outcome()});
    });
  }
  void fail(std::exception_ptr why) noexcept override {
    deliver([why = std::move(why)] { return failed_outcome(why); });
  }
  /// The answer, for whoever answers in its place (this call then answers nothing).
  actor_answer take_answer() noexcept { return std::exchange(answer_, nullptr); }

  std::string method_key() const override { throw state_error("a member's call is not re-sent"); }
  std::vector<std::byte> encode() const override {
    throw state_error("a member's call is not re-sent");
  }
  void settle(std::span<const std::byte>, const std::string&) noexcept override {}

private:
  void deliver(reply_encoder encode) noexcept {
    auto answer = take_answer();
    if (!answer)
      return; // answered already, or by whoever took the answer
    try {
      answer(std::move(encode));
    } catch (...) {
      report_escaped_exception("the answer to an actor call");
    }
  }

  prepared_call prepared_;
  actor_answer answer_;
  std::string actor_;
};

/// Answers with `why`.
void refuse(const actor_answer& answer, std::exception_ptr why) noexcept {
  try {
    answer([why = std::move(why)] { return failed_outcome(why); });
  } catch (...) {
    report_escaped_exception("the answer to an actor call");
  }
}

std::exception_ptr no_longer_here(const std::string& actor) {
  return std::make_exception_ptr(
    actor_stopped("actor '" + actor + "' was stopped on this member before this call ran"));
}

} // namespace

call_failure failure_of(const std::exception_ptr& why) {
  try {
    std::rethrow_exception(why);
  } catch (...) {
    return {0, current_failure()};
  }
}

std::vector<std::byte> failed_outcome(const std::exception_ptr& why) {
  return serialize(actor_reply{failure_of(why), {}});
}

std::uint64_t hosted_actors::spawn(const std::string& group, const std::string& name,
                                   const std::string& type, const actor_spawn_request& request) {
  const auto* make = task_registry::instance().find_context_type(type);
  if (make == nullptr)
    throw serialization_error("no actor type " + type + " is registered in this program");
  if (request.max_mailbox == 0)
    throw invalid_argument("actor '" + name + "': max_mailbox must be at least 1");
  {
    std::lock_guard guard{mutex_};
    if (actors_.contains({group, name}))
      throw key_error("an actor named '" + name + "' runs on group '" + group + "' already");
    refuse_if_full();
  }
  auto object = (*make)(request.constructor); // the constructor runs here, outside the lock
  // Never waits for room: a handle waits on its own side, and a host thread must not block.
  const actor_options options{.name = name,
                              .max_mailbox = static_cast<std::size_t>(request.max_mailbox),
                              .mailbox_timeout = std::chrono::milliseconds{0}};
  auto actor = start_local_actor(rt_, options, std::move(object));
  std::lock_guard guard{mutex_};
  if (next_incarnation_ == 1) // a member's first: numbers no other member's actor had
    next_incarnation_ = std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32);
  try {
    refuse_if_full(); // others came while this one was made
  } catch (...) {
    actor->stop();
    throw;
  }
  auto [at, added] = actors_.try_emplace({group, name});
  if (!added) {
    actor->stop();
    throw key_error("an actor named '" + name + "' runs on group '" + group + "' already");
  }
  at->second.incarnation = next_incarnation_++;
  at->second.type = type;
  at->second.restartable = request.restartable;
  at->second.max_call_retries = request.max_call_retries;
  at->second.actor = std::move(actor);
  return at->second.incarnation;
}

void hosted_actors::refuse_if_full() const {
  if (actors_.size() >= max_hosted)
    throw capacity_error("this member runs " + std::to_string(max_hosted) +
                         " actors already: stop some, or spawn on another member");
}

actor_found hosted_actors::resolve(const std::string& group, const std::string& name,
                                   const std::string& type) {
  std::lock_guard guard{mutex_};
  const auto at = actors_.find({group, name});
  if (at == actors_.end())
    throw key_error("no actor named '" + name + "' runs on group '" + group + "' here");
  if (at->second.type != type)
    throw invalid_argument("actor '" + name + "' is a " + at->second.type + ", not a " + type);
  return {at->second.incarnation, at->second.restartable, at->second.max_call_retries};
}

void hosted_actors::call(const std::string& group, const std::string& name,
                         const std::string& method, int from, actor_call_envelope envelope,
                         actor_answer answer) {
  // Decoded now, outside the lock: the tensors among the arguments are read from the inbox's
  // segments while they are there to read.
  parked_call call{method, {}, std::move(answer)};
  try {
    const auto* preparer = task_registry::instance().find_call_preparer(method);
    if (preparer == nullptr)
      throw invalid_argument("no actor method " + method + " in this program");
    call.prepared = (*preparer)(envelope.arguments);
  } catch (...) {
    call.unrunnable = std::current_exception();
  }
  refusals refused;
  {
    std::lock_guard guard{mutex_};
    admit(group, name, std::move(call), from, envelope, refused);
  }
  // Answered once the lock is released: an answer may wait for room in the caller's inbox.
  for (auto& [call, why] : refused)
    refuse(call.answer, why);
}

void hosted_actors::admit(const std::string& group, const std::string& name, parked_call call,
                          int from, const actor_call_envelope& envelope, refusals& refused) {
  const auto refuse = [&](auto error) {
    refused.emplace_back(std::move(call), std::make_exception_ptr(std::move(error)));
  };
  const auto at = actors_.find({group, name});
  if (at == actors_.end() || at->second.incarnation != envelope.incarnation)
    return refuse(actor_stopped("actor '" + name +
                                "' no longer runs on this member (stopped, or restarted "
                                "elsewhere) before this call ran"));
  auto& actor = at->second;
  auto& next = actor.next[{from, envelope.handle}];
  if (envelope.seq < next)
    return refuse(
      serialization_error("actor call " + std::to_string(envelope.seq) + " came twice"));
  if (envelope.seq > next) {
    if (actor.parked.size() >= max_parked)
      return refuse(capacity_error("actor '" + name + "' holds " + std::to_string(max_parked) +
                                   " calls that came before their turn already"));
    actor.parked.emplace(std::tuple{from, envelope.handle, envelope.seq}, std::move(call));
    return;
  }
  enqueue(actor, std::move(call), refused);
  ++next;
  // The calls that came early and whose turn this was.
  for (auto early = actor.parked.find({from, envelope.handle, next}); early != actor.parked.end();
       early = actor.parked.find({from, envelope.handle, next})) {
    enqueue(actor, std::move(early->second), refused);
    actor.parked.erase(early);
    ++next;
  }
}

void hosted_actors::enqueue(hosted& actor, parked_call call, refusals& refused) {
  if (call.unrunnable) {
    auto why = call.unrunnable;
    refused.emplace_back(std::move(call), std::move(why));
    return;
  }
  if (call.method.rfind(actor.type + "#", 0) != 0) {
    auto why = std::make_exception_ptr(invalid_argument(
      "actor type " + actor.type + " has no method " + call.method + " in this program"));
    refused.emplace_back(std::move(call), std::move(why));
    return;
  }
  auto prepared = std::make_shared<prepared_actor_call>(
    std::move(call.prepared), std::move(call.answer), *actor.actor->name());
  try {
    actor.actor->enqueue(prepared);
  } catch (...) { // its mailbox full, or it stopped: the answer is the prepared call's now
    refused.emplace_back(parked_call{{}, {}, prepared->take_answer()}, std::current_exception());
  }
}

void hosted_actors::stop(const std::string& group, const std::string& name,
                         std::uint64_t incarnation) {
  hosted gone;
  {
    std::lock_guard guard{mutex_};
    const auto at = actors_.find({group, name});
    if (at == actors_.end() || at->second.incarnation != incarnation)
      return;
    gone = std::move(at->second);
    actors_.erase(at);
  }
  end(gone, name);
}

void hosted_actors::end(hosted& actor, const std::string& name) noexcept {
  actor.actor->stop();
  for (auto& [key, call] : actor.parked)
    refuse(call.answer, no_longer_here(name));
  actor.parked.clear();
}

std::size_t hosted_actors::count() {
  std::lock_guard guard{mutex_};
  return actors_.size();
}

void hosted_actors::stop_all() noexcept {
  std::map<std::pair<std::string, std::string>, hosted> all;
  {
    std::lock_guard guard{mutex_};
    all.swap(actors_);
  }
  for (auto& [key, actor] : all)
    end(actor, key.second);
}

} // namespace troupe::detail
