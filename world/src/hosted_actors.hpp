// The actors other members spawned on this one (rpc_group::spawn). Each is an actor in this
// process (actors/), found by its group and name. Calls come from other members' handles in
// whatever order the executor threads take them; each handle numbers its calls, and a call goes
// into the actor's mailbox only after those its handle sent before it, so each handle's calls
// run in the order it sent them. The call is answered when it has run, from the actor's thread.
#pragma once

#include "actor_wire.hpp"

#include "troupe/actors/actor.hpp"
#include "troupe/actors/runtime_state.hpp"
#include "troupe/actors/task.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace troupe::detail {

/// How an actor call's answer goes back, from whatever thread ends the call: what encodes its
/// actor_reply, called as the answer is sent (where the answer's tensors go is known then).
using reply_encoder = std::function<std::vector<std::byte>()>;
using actor_answer = std::function<void(reply_encoder encode)>;

class hosted_actors {
public:
  explicit hosted_actors(runtime_state& rt) : rt_(rt) {}

  /// Makes an actor of registered type `type` from the request's constructor arguments, named
  /// `name` in `group`; its incarnation. key_error if one of that name runs here already,
  /// serialization_error if this program has no such type. The constructor's exception comes
  /// out as itself.
  std::uint64_t spawn(const std::string& group, const std::string& name, const std::string& type,
                      const actor_spawn_request& request);
  /// The incarnation of the actor `name` of `group`, checking its type; key_error if none
  /// runs here, invalid_argument for another type.
  actor_found resolve(const std::string& group, const std::string& name, const std::string& type);
  /// Admits a call from member `from` (never throws: a refused call is answered with why).
  void call(const std::string& group, const std::string& name, const std::string& method, int from,
            actor_call_envelope envelope, actor_answer answer);
  /// Stops the actor if `incarnation` is the one running (the call running finishes, the rest
  /// fail) and forgets it.
  void stop(const std::string& group, const std::string& name, std::uint64_t incarnation);
  std::size_t count();
  /// Stops every actor (the world is stopping).
  void stop_all() noexcept;

private:
  /// A call whose arguments are decoded, waiting for its turn (parked) or for the mailbox.
  struct parked_call {
    std::string method;
    prepared_call prepared;
    actor_answer answer;
    /// Why it cannot run (its method unknown, its arguments undecodable): it still takes its
    /// turn, so that the calls its handle numbered after it do not wait for it, and is refused.
    std::exception_ptr unrunnable = nullptr;
  };
  struct hosted {
    std::uint64_t incarnation = 0;
    bool restartable = false;
    std::uint32_t max_call_retries = 0;
    std::string type;
    std::shared_ptr<actor_core> actor;
    std::map<std::pair<int, std::uint64_t>, std::uint64_t> next; // (member, handle) -> seq
    std::map<std::tuple<int, std::uint64_t, std::uint64_t>, parked_call> parked;
  };

  /// Calls refused, and why: answered once the lock is released.
  using refusals = std::vector<std::pair<parked_call, std::exception_ptr>>;

  /// Under the lock: puts a call in its actor's mailbox in its handle's order, parks it until
  /// its turn, or refuses it.
  void admit(const std::string& group, const std::string& name, parked_call call, int from,
             const actor_call_envelope& envelope, refusals& refused);
  /// Under the lock: puts a call in the actor's mailbox, or refuses it.
  void enqueue(hosted& actor, parked_call call, refusals& refused);
  /// Under the lock: capacity_error if this member runs as many actors as it may.
  void refuse_if_full() const;
  /// Stops an actor no longer in the table, and answers the calls it held back.
  static void end(hosted& actor, const std::string& name) noexcept;

  runtime_state& rt_;
  std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, hosted> actors_;
  std::uint64_t next_incarnation_ = 1;
};

/// The encoded actor_reply of a call that failed before it ran.
std::vector<std::byte> failed_outcome(const std::exception_ptr& why);

} // namespace troupe::detail
