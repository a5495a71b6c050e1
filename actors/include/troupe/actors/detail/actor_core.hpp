// The machinery beneath troupe::actor<T> (actor.hpp): one call to an actor, where a handle's calls
// go (its core: a thread here, a worker process, a world member), and where a handle that
// travelled finds its actor. Included by actor.hpp's templates; users need not read it.
#pragma once

#include "troupe/actors/async_result.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace troupe::detail {

/// One call to an actor. Destroyed unrun (its actor stopped first), it settles its result with
/// actor_stopped: no caller waits for ever.
class actor_call {
public:
  virtual ~actor_call() = default;
  /// Runs the call on the actor's object, in this process, and settles its result.
  virtual void run(void* object) noexcept = 0;
  /// Settles the result with `why` without running.
  virtual void fail(std::exception_ptr why) noexcept = 0;
  /// For an actor in another process: the registered method's key, and the arguments as they
  /// travel (one call, as encode_calls makes it). invalid_argument or serialization_error if
  /// they cannot travel.
  virtual std::string method_key() const = 0;
  virtual std::vector<std::byte> encode() const = 0;
  /// Settles the result from the outcomes of the call's chunk, run at `where`.
  virtual void settle(std::span<const std::byte> outcomes, const std::string& where) noexcept = 0;

  bool idempotent = false;
  std::size_t retries = 0; // times it was sent again after its actor's process died
};

/// Where a handle that travels finds its actor: a world actor's group, name and registered
/// type, the member (world rank) it runs on, which incarnation of it, whether its spawner makes
/// it again when that member is lost (else a handle need not wait for that), and how often an
/// idempotent call may go again then. An actor outside a world (`process` set) is found by its
/// number in the process that holds its mailbox, from the worker processes of that process's
/// pools, whose calls it relays (pools/src/process/relay_*.cpp).
struct actor_address {
  std::string group, name, type;
  std::int32_t rank = -1;
  std::uint64_t incarnation = 0;
  bool restartable = false;
  std::uint32_t max_call_retries = 0;
  std::int32_t process = 0; // the pid holding the mailbox of an actor outside a world
  std::uint64_t number = 0; // its number there

  template <class Archive>
  void serialize(Archive& ar) {
    ar(group, name, type, rank, incarnation, restartable, max_call_retries, process, number);
  }
};

/// Where an actor's calls go: its thread in this process, or another process.
class actor_core {
public:
  virtual ~actor_core() = default;
  /// Puts `call` in the actor's mailbox, waiting for room (capacity_error past the timeout);
  /// actor_stopped if the actor no longer takes calls.
  virtual void enqueue(std::shared_ptr<actor_call> call) = 0;
  virtual bool alive() const noexcept = 0;
  virtual void stop() noexcept = 0;
  /// Shared with the calls, which keep it (a count up, not a copy of the text).
  virtual const std::shared_ptr<const std::string>& name() const noexcept = 0;
  /// Where a world actor is reached from another process; none for an actor outside a world
  /// (whose handle, when it travels, is numbered in its process: travelled_address).
  virtual std::optional<actor_address> address() const { return std::nullopt; }
};

/// A handle's core from its address, in the process that decodes it (the world installs how
/// for world actors, a pool's worker process for actors of the process that started it:
/// serialization_error where none can reach it).
std::shared_ptr<actor_core> resolve_actor(const actor_address& address);
using actor_resolver = std::shared_ptr<actor_core> (*)(const actor_address& address);
/// Installs (or, with nullptr, removes) the resolver; the world does, for its lifetime.
void set_actor_resolver(actor_resolver resolver) noexcept;
/// The same for actors outside a world, in a pool's worker process (installed for its life).
void set_relay_resolver(actor_resolver resolver) noexcept;
/// The address of an actor outside a world, of registered type `type`, whose handle travels:
/// numbered in this process (weakly: the number does not keep it alive).
actor_address travelled_address(const std::shared_ptr<actor_core>& core, const std::string& type);
/// What saving a handle without an address throws.
[[noreturn]] void cannot_travel(const std::string& actor);

/// The error of a call that never ran because its actor stopped.
std::exception_ptr stopped_before_running(const std::string& actor) noexcept;

} // namespace troupe::detail
