#include "troupe/actors/detail/failure.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/actors/remote_exception.hpp"

#include <cxxabi.h>
#include <typeinfo>

namespace troupe::detail {

std::exception_ptr failure::exception(const std::string& origin) const {
  if (type.empty())
    return std::make_exception_ptr(serialization_error(message));
  if (const auto rebuild = registered_rebuilder(type))
    return rebuild->remote(message, type, origin);
  return std::make_exception_ptr(task_error(type, message, origin));
}

std::exception_ptr failure::exception() const {
  if (type.empty())
    return std::make_exception_ptr(serialization_error(message));
  if (const auto rebuild = registered_rebuilder(type))
    return rebuild->local(message);
  return std::make_exception_ptr(task_error(type, message, std::string{}));
}

failure current_failure() {
  try {
    throw;
  } catch (const task_error& e) {
    // Came from another process and goes on: as the type it was there, with its own message.
    return {e.type_name(), e.message()};
  } catch (const std::exception& e) {
    if (const auto* origin = origin_of(e)) // rebuilt here as itself, and goes on as itself
      return {origin->type_name(), e.what()};
    return {demangle(typeid(e).name()), e.what()};
  } catch (...) {
    const auto* type = abi::__cxa_current_exception_type();
    return {type != nullptr ? demangle(type->name()) : "unknown", ""};
  }
}

} // namespace troupe::detail
