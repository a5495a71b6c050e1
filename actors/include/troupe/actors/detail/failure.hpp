// A failure as troupe carries it inside: between processes (a worker's reply to a chunk, an item
// of a chunk that threw, a call answered by an actor elsewhere), between the members of a world
// (a reply's status), and from a lost worker to the work it held. One value whatever the road,
// and one place where it becomes the exception the user catches (exception()).
#pragma once

#include "troupe/actors/serialization.hpp"

#include <exception>
#include <string>
#include <utility>

namespace troupe::detail {

struct failure {
  /// The exception's type as type_name names it; empty when the request itself could not be
  /// read or run, which the caller gets as a serialization_error.
  std::string type;
  std::string message;

  /// A failure of troupe's own of type E (troupe::key_error, troupe::worker_lost, ...).
  template <class E>
  static failure of(std::string message) {
    return {type_name<E>(), std::move(message)};
  }

  /// An empty value says nothing failed.
  bool failed() const noexcept { return !type.empty() || !message.empty(); }

  /// The same failure, its message followed by `context` (" while running this call").
  failure with(const std::string& context) const { return {type, message + context}; }

  /// The exception the caller catches for a failure that happened at `origin` (a worker, a
  /// process, a member): its type again, rebuilt as remote_exception.hpp says (it also derives
  /// from remote_origin naming `origin`), task_error for a type not registered.
  std::exception_ptr exception(const std::string& origin) const;

  /// The exception the caller catches for a failure of this process's own (a lost worker, a
  /// member's refusal): its type again, plain; task_error for a type not registered.
  std::exception_ptr exception() const;
};

/// The exception being handled (inside a catch block) as a failure.
failure current_failure();

} // namespace troupe::detail
