#include "local_channel.hpp"

#include <iostream>

namespace troupe::detail {

namespace {

using namespace std::chrono_literals;

/// A peer whose inbox could not be opened is tried again after this (it may not exist yet).
constexpr auto reopen_after = 1s;

queue_options inbox_options() {
  queue_options options;
  options.owned_by_creator = true; // a crashed member's inbox is collected as an orphan
  return options;
}

} // namespace

local_channel::local_channel(call_host& host, const std::string& world_id, int rank, int capacity)
  : host_(host), world_id_(world_id), rank_(rank), capacity_(capacity),
    requests_(queue<local_message>::create(inbox_name(rank, false), inbox_options())),
    replies_(queue<local_message>::create(inbox_name(rank, true), inbox_options())) {
  // Each reader hands what it reads to another thread (an executor, a waiting caller), which
  // needs the core a reader watching its inbox would hold: 65-100 us a local rpc_sync on two
  // cores with the watching, 10-25 us without.
  requests_.spin_while_waiting(false);
  replies_.spin_while_waiting(false);
  for (int other = 0; other < capacity; ++other)
    lost_.push_back(std::make_unique<std::atomic<bool>>(false));
  replies_reader_ = std::thread{[this] { settle_replies(); }};
  host_.post([this] { read_request(); });
}

local_channel::~local_channel() { stop(); }

std::string local_channel::inbox_name(int rank, bool replies) const {
  return "troupe.w." + world_id_ + "." + std::to_string(rank) + (replies ? ".r" : ".q");
}

local_channel::peer* local_channel::peer_of(int rank, bool answering) {
  std::lock_guard guard{mutex_};
  auto& known = peers_[rank];
  if (known.requests)
    return &known;
  const auto now = std::chrono::steady_clock::now();
  constexpr auto never = std::chrono::steady_clock::time_point::max(); // rejoined()
  if (known.retry_after == never || (!answering && now < known.retry_after))
    return nullptr;
  try {
    known.replies.emplace(queue<local_message>::open(inbox_name(rank, true)));
    known.requests.emplace(queue<local_message>::open(inbox_name(rank, false)));
    return &known;
  } catch (const troupe::error&) {
    known.replies.reset();
    known.retry_after = now + reopen_after; // another host, or not created yet
    return nullptr;
  }
}

bool local_channel::put(peer& to, int rank, bool reply, const local_message& message) {
  auto& inbox = reply ? *to.replies : *to.requests;
  const auto& gone = *lost_[static_cast<std::size_t>(rank)];
  try {
    return inbox.put_while(message, [&] { return !gone.load() && !stopping_.load(); });
  } catch (const queue_closed&) {
    return false;
  }
}

bool local_channel::call(int rank, const std::string& group, call_request& request,
                         const bytes_result& reply) {
  auto* to = stopping_.load() ? nullptr : peer_of(rank);
  if (to == nullptr)
    return false;
  if (lost_[static_cast<std::size_t>(rank)]->load()) {
    reply->set_error(std::make_exception_ptr(peer_lost(host_.label(rank) + " was lost")));
    return true;
  }
  // Large tensors among the arguments are copied once, into segments of the callee's inbox,
  // and from there once more, into the task's arguments.
  segment_store tensors = to->requests->tensor_segments();
  local_message message;
  message.from = rank_;
  message.kind = static_cast<std::uint8_t>(request.kind);
  message.group = group;
  message.key = std::move(request.key);
  message.name = std::move(request.name);
  message.type = std::move(request.type);
  if (request.encode) {
    tensor_store_scope scope{tensors};
    message.payload = to_wire(request.encode());
  } else {
    message.payload = to_wire(request.payload);
  }
  {
    std::lock_guard guard{mutex_};
    message.id = next_id_++;
    pending_.emplace(message.id, std::pair{rank, reply});
  }
  bool sent = false;
  try {
    tensors.hold_for_queue();
    sent = put(*to, rank, false, message);
  } catch (...) { // too large for the shared memory there is, say: the caller hears it
    tensors.release_for_queue();
    std::lock_guard guard{mutex_};
    pending_.erase(message.id);
    throw;
  }
  if (!sent) {
    tensors.release_for_queue();
    std::lock_guard guard{mutex_};
    if (pending_.erase(message.id) != 0)
      reply->set_error(std::make_exception_ptr(peer_lost(host_.label(rank) + " was lost")));
  }
  return true;
}

void local_channel::lost(int rank, const std::string& why) {
  lost_[static_cast<std::size_t>(rank)]->store(true);
  std::vector<bytes_result> failed;
  {
    std::lock_guard guard{mutex_};
    for (auto at = pending_.begin(); at != pending_.end();) {
      if (at->second.first != rank) {
        ++at;
        continue;
      }
      failed.push_back(std::move(at->second.second));
      at = pending_.erase(at);
    }
  }
  for (auto& reply : failed)
    reply->set_error(std::make_exception_ptr(peer_lost(why)));
}

void local_channel::fail_all(const std::exception_ptr& why) {
  std::map<std::uint64_t, std::pair<int, bytes_result>> failed;
  {
    std::lock_guard guard{mutex_};
    failed.swap(pending_);
  }
  for (auto& [id, call] : failed)
    call.second->set_error(why);
}

void local_channel::rejoined(int rank) {
  std::lock_guard guard{mutex_};
  peers_[rank] = peer{.retry_after = std::chrono::steady_clock::time_point::max()};
}

bool local_channel::joined_again(int rank) {
  std::lock_guard guard{mutex_};
  const auto at = peers_.find(rank);
  return at != peers_.end() &&
         at->second.retry_after == std::chrono::steady_clock::time_point::max();
}

void local_channel::stop() noexcept {
  if (stopping_.exchange(true))
    return;
  requests_.close();
  replies_.close();
  replies_reader_.join();
  std::map<std::uint64_t, std::pair<int, bytes_result>> pending;
  {
    std::lock_guard guard{mutex_};
    pending.swap(pending_);
  }
  for (auto& [_, entry] : pending)
    entry.second->set_error(std::make_exception_ptr(state_error("the world has stopped")));
  {
    // The calls failed above may have been what kept the executor from reaching the read.
    std::unique_lock guard{mutex_};
    requests_read_.wait(guard, [this] { return !reading_requests_; });
  }
  for (auto* inbox : {&requests_, &replies_}) {
    try {
      inbox->unlink();
    } catch (...) {
      // Gone already: nothing is left behind.
    }
  }
}

void local_channel::settle(local_message& reply) {
  bytes_result waiting;
  {
    std::lock_guard guard{mutex_};
    auto at = pending_.find(reply.id);
    if (at == pending_.end())
      return;
    waiting = std::move(at->second.second);
    pending_.erase(at);
  }
  if (const auto why = reply_failure(reply.status, reply.text); why.failed()) {
    waiting->set_error(why.exception());
    return;
  }
  // An outcome's large tensors wait in this inbox's segments; the call's decoding (typed_call
  // put it in place before the call went out) runs here and reads them.
  segment_store tensors = replies_.tensor_segments();
  tensor_store_scope scope{tensors};
  waiting->set_value(std::move(reply.payload));
}

namespace {

/// The next message of `inbox`; nullopt once it is closed and drained. A message that does not
/// decode is reported to `undecodable` and skipped.
template <class OnUndecodable>
std::optional<local_message> next_of(queue<local_message>& inbox, OnUndecodable&& undecodable) {
  for (;;) {
    try {
      return inbox.get(std::chrono::milliseconds{200});
    } catch (const timeout_error&) {
      continue;
    } catch (const queue_closed&) {
      return std::nullopt;
    } catch (const std::exception& e) {
      std::cerr << "troupe: a message in this member's inbox did not decode: " << e.what() << "\n";
      undecodable(e);
    }
  }
}

} // namespace

void local_channel::settle_replies() {
  // A reply that does not decode answers one of the pending calls, which one is lost with it:
  // all of them fail rather than one waiting for ever.
  const auto fail_pending = [this](const std::exception& e) {
    std::map<std::uint64_t, std::pair<int, bytes_result>> pending;
    {
      std::lock_guard guard{mutex_};
      pending.swap(pending_);
    }
    for (auto& [_, entry] : pending)
      entry.second->set_error(std::make_exception_ptr(
        serialization_error(std::string{"a reply did not decode: "} + e.what())));
  };
  while (auto reply = next_of(replies_, fail_pending))
    settle(*reply);
}

void local_channel::read_request() {
  // A request from no rank, or from one that joined again (its old process, which these inboxes
  // knew, is not the member now), is not served.
  const auto refused = [this](const local_message& message) {
    return message.from < 0 || message.from >= capacity_ || joined_again(message.from);
  };
  auto request = next_of(requests_, [](const std::exception&) {});
  while (request && refused(*request))
    request = next_of(requests_, [](const std::exception&) {});
  if (!request) {
    std::lock_guard guard{mutex_};
    reading_requests_ = false;
    requests_read_.notify_all();
    return;
  }
  // Another executor thread reads the next request while this one answers: the call starts
  // without waiting for a second thread to wake (a local rpc_sync: ~30 us -> ~20 us here).
  host_.post([this] { read_request(); });
  try {
    answer(*request);
  } catch (const std::exception& e) {
    // Nothing may leave an executor's job, and the caller, who has no timeout, must hear.
    local_message refusal;
    refusal.is_reply = true;
    refusal.id = request->id;
    refusal.from = rank_;
    refusal.set_failure(
      failure::of<state_error>(std::string{"the call could not be answered: "} + e.what()));
    if (auto* caller = peer_of(request->from, true))
      (void)reply_to(*caller, request->from, refusal);
  }
}

namespace {

/// Calls whose outcome the caller decodes as the reply arrives (typed_call), so that it may
/// hold tensors in the caller's reply inbox's segments; kept and fetched values stay inline.
bool decoded_on_arrival(call_kind kind) {
  return kind == call_kind::task || kind == call_kind::service || kind == call_kind::on_value;
}

} // namespace

void local_channel::answer(local_message& request) {
  const auto kind = static_cast<call_kind>(request.kind);
  segment_store arguments = requests_.tensor_segments();
  // Null: its inbox is gone, and so is whoever waits. A caller this member tried to reach
  // before its inboxes were made (a member that just joined) is reached now.
  auto* caller = peer_of(request.from, true);
  std::optional<segment_store> outcome_tensors;
  if (caller != nullptr && decoded_on_arrival(kind))
    outcome_tensors.emplace(caller->replies->tensor_segments());
  auto tensors =
    outcome_tensors ? crossing_store{*outcome_tensors, arguments} : crossing_store{arguments};
  served outcome;
  {
    tensor_store_scope scope{tensors};
    incoming_call call{kind,
                       std::move(request.key),
                       std::move(request.name),
                       std::move(request.type),
                       std::move(request.payload),
                       request.from};
    late_answer later; // made only for the kind that is answered after run() returns
    if (kind == call_kind::actor_call)
      later = host_.late_local_answer(request.from, request.id);
    outcome = host_.run(request.group, call, later);
  }
  if (caller == nullptr || outcome.deferred)
    return;
  local_message reply;
  reply.is_reply = true;
  reply.id = request.id;
  reply.from = rank_;
  reply.set_failure(outcome.why);
  reply.payload = to_wire(outcome.payload);
  // A failed call's answer carries no outcome: segments its encoding may have begun go now.
  const bool carries_tensors = outcome_tensors && !outcome.why.failed();
  if (carries_tensors) {
    try {
      outcome_tensors->hold_for_queue();
    } catch (...) { // a segment's holder table full, or locked by a frozen process
      outcome_tensors->release_for_queue();
      throw; // read_request answers with the error
    }
  }
  if (!reply_to(*caller, request.from, reply) && carries_tensors)
    outcome_tensors->release_for_queue();
}

void local_channel::answer_late(int rank, std::uint64_t id, served outcome) noexcept {
  auto* caller = stopping_.load() ? nullptr : peer_of(rank, true);
  if (caller == nullptr)
    return; // the caller's inbox is gone, and so is whoever waited
  // The outcome's large tensors go into the caller's reply inbox, as a task's do; its handle
  // decodes the answer as it arrives (world_actor.cpp).
  std::optional<segment_store> tensors;
  if (outcome.encode) {
    tensors.emplace(caller->replies->tensor_segments());
    try {
      tensor_store_scope scope{*tensors};
      outcome.payload = outcome.encode();
      tensors->hold_for_queue();
    } catch (...) {
      tensors->release_for_queue();
      tensors.reset();
      outcome.unsendable();
    }
  }
  local_message reply;
  reply.is_reply = true;
  reply.id = id;
  reply.from = rank_;
  reply.set_failure(outcome.why);
  reply.payload = to_wire(outcome.payload);
  if (!reply_to(*caller, rank, reply) && tensors)
    tensors->release_for_queue();
}

bool local_channel::reply_to(peer& caller, int rank, local_message& reply) {
  try {
    return put(caller, rank, true, reply); // a caller that is gone has no use for it
  } catch (const std::exception& e) {
    // An answer too large for the shared memory left: the caller gets that, not silence.
    local_message unsent = std::move(reply);
    unsent.set_failure(
      failure::of<state_error>(std::string{"the answer could not be sent: "} + e.what()));
    unsent.payload.clear();
    try {
      (void)put(caller, rank, true, unsent);
    } catch (...) {
    }
    return false;
  }
}

} // namespace troupe::detail
