// What rpc_group's and remote_ref's templates need from the compiled part of the module: calls
// as bytes to a member, the group's key tables, and what this member keeps for others. No CAF.
#pragma once

#include "troupe/actors/async_result.hpp"
#include "troupe/actors/detail/failure.hpp"
#include "troupe/actors/task.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::detail {

class group_state;

using bytes = std::vector<std::byte>;
/// A reply's payload as it arrived from the network (kept as is: decoding reads it in place).
using reply_bytes = std::vector<char>;
using bytes_result = std::shared_ptr<result_state<reply_bytes>>;

inline std::span<const std::byte> as_bytes(const reply_bytes& payload) {
  return std::as_bytes(std::span{payload});
}

/// What a call asks of the member it goes to.
enum class call_kind : std::uint8_t {
  task, // run the registered task `name`; reply its outcome
  service, // run the service registered under `key`; reply its outcome
  keep, // run the task `name` (or the service `key`), keep its outcome; reply its id
  on_value, // run the context task `name` on the value paired under `key`
  fetch, // reply the value paired under `key`, or the outcome kept under id `key`
  release, // forget the outcome kept under id `key`
  // Actors on members (hosted_actors.hpp): `key` is the actor's name.
  actor_spawn, // make an actor of registered type `name`; reply its incarnation
  actor_resolve, // reply the incarnation of the actor, checking it is of type `name`
  actor_call, // call method `name` of the actor; reply the call's outcome, once it has run
  actor_stop, // stop the actor (the incarnation in the payload)
  actor_count, // reply how many actors run here
  // Keys (key_owners.hpp): whether the member called holds the key still.
  holds_paired, // reply nothing if a value is paired here under `key`, else key_error
  holds_service, // the same for a service
};

/// The group's two tables of keys, held by the world's rank 0.
enum class key_table : std::uint8_t { paired, services };

/// The call that asks a member whether it holds a key of `table`, and the table such a call
/// asks of (call_kind::holds_paired or holds_service).
inline call_kind holds_call(key_table table) noexcept {
  return table == key_table::paired ? call_kind::holds_paired : call_kind::holds_service;
}
inline key_table table_asked(call_kind holds) noexcept {
  return holds == call_kind::holds_paired ? key_table::paired : key_table::services;
}
/// Whether a call only looks in the member's tables: its member actor answers it at once, not
/// queued behind the calls that run.
inline bool answered_at_once(call_kind kind) noexcept {
  return kind == call_kind::holds_paired || kind == call_kind::holds_service;
}

struct call_request {
  call_kind kind = call_kind::task;
  std::string key; // a paired value's or service's key, or a kept outcome's id
  std::string name; // a task's name
  std::string type; // the value type the caller expects (fetch, on_value)
  bytes payload;
  /// If set, makes the payload once the call's way is known: to a member on this host, the
  /// large tensors among the arguments go straight into its inbox's shared memory. Called
  /// before start_call returns (it may hold references to the caller's arguments).
  std::function<bytes()> encode;
};

/// The group's member called `name`, as a world rank; invalid_argument if it is no member.
int member_rank(const group_state& group, std::string_view name);
/// "member 'name' (rank r)", for messages and as the origin of rethrown exceptions.
std::string member_label(const group_state& group, int rank);

/// Sends `request` to the member of world rank `rank`; the reply's payload, or peer_lost,
/// timeout_error, key_error, ... arrives in `reply` (a new result if null), which it returns.
bytes_result start_call(group_state& group, int rank, call_request request,
                        std::optional<std::chrono::milliseconds> timeout,
                        bytes_result reply = nullptr);

/// Blocks for a call's reply payload.
reply_bytes await_call(const bytes_result& reply);

/// The world rank of the member that registered `key`; key_error naming the key and group.
int find_owner(group_state& group, key_table table, const std::string& key);
/// find_owner for a service, asked of rank 0 only when this member does not know the owner yet.
int service_owner(group_state& group, const std::string& key);
/// find_owner, asked of rank 0 only when the owner this member remembers no longer holds `key`
/// (asked of that owner): the owner now, as rank 0 would say.
int current_owner(group_state& group, key_table table, const std::string& key);

/// A value this member pairs: the object, its type, and how to encode it for fetches.
struct paired_value {
  std::shared_ptr<void> object;
  std::string type;
  std::function<bytes()> encode;
  std::shared_ptr<std::mutex> guard = std::make_shared<std::mutex>(); // calls on it, one at a time
};
void pair_value(group_state& group, const std::string& key, paired_value value);
void register_service(group_state& group, const std::string& key, chunk_invoker service);
/// Removes this member's key from `table`; key_error if the group does not have it from here.
void remove_key(group_state& group, key_table table, const std::string& key);
bool has_key(group_state& group, key_table table, const std::string& key);

/// Tells `rank` to forget a kept outcome (best effort: a lost member has forgotten it anyway).
void release_kept(group_state& group, int rank, const std::string& id) noexcept;

/// A call's outcome as a task's invoker encoded it: the value, or the exception rethrown with
/// `origin` as where it came from.
template <class R>
R decode_outcome(std::span<const std::byte> payload, const std::string& origin) {
  auto outcome = deserialize<chunk_outcomes<R>>(payload);
  if (!outcome.second.empty()) {
    std::rethrow_exception(outcome.second.front().why.exception(origin));
  }
  if (outcome.first.size() != 1)
    throw serialization_error("a call's reply holds " + std::to_string(outcome.first.size()) +
                              " outcomes, not 1");
  if constexpr (!std::is_void_v<R>)
    return std::move(outcome.first.front());
}

/// One call's arguments, encoded as the task with parameters Args decodes them.
template <class Args, class... A>
bytes encode_arguments(A&&... args) {
  static_assert(std::is_constructible_v<Args, A&&...>,
                "the arguments do not convert to the task's parameter types");
  std::vector<Args> one;
  one.emplace_back(std::forward<A>(args)...);
  return encode_calls(one);
}

/// Turns a reply of bytes into a typed result, decoded on the thread that delivers the reply.
template <class R>
async_result<R> typed_result(const bytes_result& reply, std::string origin) {
  auto typed = std::make_shared<result_state<R>>();
  reply->on_value([typed, origin](const reply_bytes& payload) {
    std::optional<stored_t<R>> value;
    std::exception_ptr failure;
    try {
      if constexpr (std::is_void_v<R>) {
        decode_outcome<R>(as_bytes(payload), origin);
        value.emplace();
      } else {
        value.emplace(decode_outcome<R>(as_bytes(payload), origin));
      }
    } catch (...) {
      failure = std::current_exception();
    }
    tensor_store_pause users_callbacks; // these run the caller's on_result/on_error callbacks
    if (failure)
      typed->set_error(std::move(failure));
    else
      typed->set_value(std::move(*value));
  });
  reply->on_error([typed](std::exception_ptr error) { typed->set_error(std::move(error)); });
  return async_result<R>{typed};
}

/// Sends a call whose reply decodes as R. The decoding is in place before the call goes out, so
/// it runs on the thread that delivers the reply, which makes the reply's tensors readable
/// there (a same-host member's answer may hold them in shared memory until then).
template <class R>
async_result<R> typed_call(group_state& group, int rank, call_request request,
                           std::optional<std::chrono::milliseconds> timeout, std::string origin) {
  auto reply = std::make_shared<result_state<reply_bytes>>();
  auto typed = typed_result<R>(reply, std::move(origin));
  (void)start_call(group, rank, std::move(request), timeout, reply);
  return typed;
}

} // namespace troupe::detail
