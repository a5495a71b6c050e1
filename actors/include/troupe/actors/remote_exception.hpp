// Exceptions that cross processes as themselves.
//
// A task that throws in a worker process (or on another host) is rethrown in the caller as the
// same type when that type is registered, and as troupe::task_error otherwise; either way it
// also derives from troupe::remote_origin, which names the type and the worker (error.hpp).
// Registered already: the standard exceptions of <stdexcept> (std::invalid_argument,
// std::out_of_range, std::runtime_error, ...) and all of troupe's errors. A type of your own:
//
//   struct model_diverged : std::runtime_error { using std::runtime_error::runtime_error; };
//   TROUPE_EXCEPTION(model_diverged);    // at namespace scope, once per program
//
//   try { pool.map(train, shards); } catch (const model_diverged& e) { ... }
//
// A registered type must be constructible from its message (a std::string) and not final. It is
// rebuilt from its message alone: other members it carries do not travel.
#pragma once

#include "troupe/actors/detail/failure.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/actors/serialization.hpp"

#include <exception>
#include <optional>
#include <string>
#include <type_traits>

namespace troupe::detail {

/// An exception of type E thrown again here, with where it came from.
template <class E>
class rebuilt_exception final : public E, public remote_origin {
public:
  rebuilt_exception(const std::string& message, const std::string& type, const std::string& worker)
    : E(message), remote_origin(type, worker) {}
};

/// How an exception type named in a failure is thrown again: `remote` for one that came from
/// elsewhere (`origin` names where), `local` for one of this process's own.
struct exception_rebuilder {
  std::exception_ptr (*remote)(const std::string& message, const std::string& type,
                               const std::string& origin);
  std::exception_ptr (*local)(const std::string& message);
};

/// Registers how to rebuild exceptions whose type is named `type`.
void add_exception_type(const std::string& type, exception_rebuilder rebuild);

/// How exceptions whose type is named `type` are rebuilt, if that type is registered.
std::optional<exception_rebuilder> registered_rebuilder(const std::string& type);

template <class E>
bool register_exception() {
  static_assert(std::is_constructible_v<E, const std::string&> && !std::is_final_v<E>,
                "TROUPE_EXCEPTION needs an exception type constructible from its message (a "
                "std::string) and not final");
  add_exception_type(
    type_name<E>(),
    {[](const std::string& message, const std::string& type, const std::string& origin) {
       return std::make_exception_ptr(rebuilt_exception<E>(message, type, origin));
     },
     [](const std::string& message) { return std::make_exception_ptr(E(message)); }});
  return true;
}

} // namespace troupe::detail

#define TROUPE_EXCEPTION_CONCAT_(a, b) a##b
#define TROUPE_EXCEPTION_NAME_(line) TROUPE_EXCEPTION_CONCAT_(troupe_exception_registered_, line)

/// Makes exceptions of `type` thrown by tasks in other processes come back as `type`.
#define TROUPE_EXCEPTION(type)                                                                     \
  [[maybe_unused]] static const bool TROUPE_EXCEPTION_NAME_(__LINE__) =                            \
    ::troupe::detail::register_exception<type>()
