#include "troupe/actors/detail/failure.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/actors/remote_exception.hpp"

#include <cxxabi.h>
#include <typeinfo>

namespace troupe::detail {

namespace {

/// The exception `why` stands for: from `origin` when it came from elsewhere, else of this
/// process (null origin).
std::exception_ptr rebuild(const failure& why, const std::string* origin) {
  if (why.type.empty())
    return std::make_exception_ptr(serialization_error(why.message));
  const auto rebuilder = registered_rebuilder(why.type);
  if (!rebuilder)
    return std::make_exception_ptr(task_error(why.type, why.message, origin ? *origin : ""));
  return origin ? rebuilder->remote(why.message, why.type, *origin) : rebuilder->local(why.message);
}

} // namespace

std::exception_ptr failure::exception(const std::string& origin) const {
  return rebuild(*this, &origin);
}

std::exception_ptr failure::exception() const { return rebuild(*this, nullptr); }

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
