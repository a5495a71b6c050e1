// troupe's error hierarchy.
//
// Every exception troupe throws derives from `troupe::error` and from the standard exception that
// fits it (`std::invalid_argument`, `std::runtime_error`, ...), so callers can catch either way:
//
//   try { pool.map(f, xs, 0); }
//   catch (const troupe::invalid_argument& e) { ... }   // or std::invalid_argument, or
//   troupe::error
//
// `troupe::error` is a mix-in rather than a std::exception subclass: deriving it from
// std::exception would give each concrete error two std::exception bases, and `catch
// (const std::exception&)` would then stop matching them.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace troupe {

/// What every error troupe throws derives from, beside the standard exception it matches: catch
/// (const troupe::error&) catches all of troupe's (docs/guide/errors.md lists them).
class error {
public:
  virtual ~error() = default;
  /// What was wrong, naming the value, member, worker or key.
  virtual const char* what() const noexcept = 0;
};

namespace detail {
template <class StdException>
class error_base : public StdException, public error {
public:
  explicit error_base(const std::string& message) : StdException(message) {}
  const char* what() const noexcept override { return StdException::what(); }
};
} // namespace detail

/// An argument was out of range or malformed (a chunksize of 0, a negative worker count, ...).
class invalid_argument : public detail::error_base<std::invalid_argument> {
  using error_base::error_base;
};

/// A call that is not allowed in the object's current state (`join()` on a running pool, a call
/// through an empty or moved-from handle, ...).
class state_error : public detail::error_base<std::logic_error> {
  using error_base::error_base;
};

namespace detail {
/// What a handle that holds nothing (default-constructed or moved from) throws when it is used:
/// state_error saying "<use> on an empty <type> (default-constructed or moved from)".
[[noreturn]] void throw_empty_handle(const char* type, const char* use);
} // namespace detail

/// A wait ran out of time; the awaited result stays retrievable later.
class timeout_error : public detail::error_base<std::runtime_error> {
  using error_base::error_base;
};

/// The pool was closed or terminated before it could run the work.
class pool_closed : public detail::error_base<std::runtime_error> {
  using error_base::error_base;
};

/// Bytes that do not decode: truncated, corrupted, or written for another type.
class serialization_error : public detail::error_base<std::runtime_error> {
  using error_base::error_base;
};

/// The worker process running a task died (or froze) before it answered.
class worker_lost : public detail::error_base<std::runtime_error> {
  using error_base::error_base;
};

/// The queue was closed: nothing more can be put, and it has been drained.
class queue_closed : public detail::error_base<std::runtime_error> {
  using error_base::error_base;
};

/// Something does not fit: a message larger than a queue's limit or than the shared memory the
/// machine has, or a placement of modules that no device's memory holds.
class capacity_error : public detail::error_base<std::runtime_error> {
  using error_base::error_base;
};

/// A peer went away: a member of a world, or a node, died, froze past the heartbeat timeout, or
/// lost its connection. Every call pending on it fails with this.
class peer_lost : public detail::error_base<std::runtime_error> {
  using error_base::error_base;
};

/// This member is on the losing side of a partition: its world keeps its tables in a store
/// (world_options::store) and this member's lease there is gone (the store's quorum is out of its
/// reach), so the others have lost it. Every call and group operation it makes fails with this
/// until it joins again (world_options::rejoin); what it waited on fails with it too.
class partition_error : public peer_lost {
public:
  /// A partition_error saying `message`.
  explicit partition_error(const std::string& message) : peer_lost(message) {}
};

/// A peer could not be reached, or refused this process: nothing listens at the address, the
/// TLS handshake failed (a certificate from another CA, or TLS on one side only), or the address
/// could not be listened on.
class network_error : public detail::error_base<std::runtime_error> {
  using error_base::error_base;
};

/// An actor no longer takes calls: it was stopped (stop(), its runtime stopping, or a restart
/// limit passed); the message names the actor and the cause. Calls it had not started fail
/// with this too.
class actor_stopped : public detail::error_base<std::runtime_error> {
  using error_base::error_base;
};

/// A key a group does not know, or already knows (machin's KeyError): a paired value or service.
class key_error : public detail::error_base<std::out_of_range> {
  using error_base::error_base;
};

/// Where an exception rebuilt in this process came from: a task that threw in another process
/// or host. Every exception a process pool hands back (as its own type, or as task_error) also
/// derives from this, so the worker stays known:
///
///   catch (const std::out_of_range& e) {
///     if (const auto* from = troupe::origin_of(e)) log(from->worker());
///   }
class remote_origin {
public:
  /// An origin: the exception's type as its process named it, and the worker that ran the task.
  remote_origin(std::string type_name, std::string worker)
    : type_name_(std::move(type_name)), worker_(std::move(worker)) {}
  virtual ~remote_origin() = default;
  /// The thrown exception's type, as its process named it ("std::out_of_range").
  const std::string& type_name() const noexcept { return type_name_; }
  /// Which worker ran the task ("worker 1 (pid 4242)").
  const std::string& worker() const noexcept { return worker_; }

private:
  std::string type_name_;
  std::string worker_;
};

/// The origin of an exception rebuilt from another process; null for a local one.
inline const remote_origin* origin_of(const std::exception& e) noexcept {
  return dynamic_cast<const remote_origin*>(&e);
}

/// A task threw, in another process or host, an exception whose type is not registered to
/// travel as itself (see TROUPE_EXCEPTION in troupe/actors/remote_exception.hpp). Carries what
/// is known of the original: its type's name, its message, and which worker ran it.
class task_error : public detail::error_base<std::runtime_error>, public remote_origin {
public:
  /// What a worker's exception of an unregistered type becomes: its type's name, its message, and
  /// the worker.
  task_error(std::string type_name, std::string message, std::string worker);
  /// The original exception's message.
  const std::string& message() const noexcept { return message_; }

private:
  std::string message_;
};

} // namespace troupe
