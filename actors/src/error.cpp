#include "troupe/actors/error.hpp"

#include <string>
#include <utility>

namespace troupe {

task_error::task_error(std::string type_name, std::string message, std::string worker)
  : error_base("task threw " + type_name + " on " + worker + ": " + message),
    remote_origin(std::move(type_name), std::move(worker)), message_(std::move(message)) {}

namespace detail {

void throw_empty_handle(const char* type, const char* use) {
  throw state_error(std::string{use} + " on an empty " + type +
                    " (default-constructed or moved from)");
}

} // namespace detail

} // namespace troupe
