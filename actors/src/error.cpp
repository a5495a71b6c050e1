#include "troupe/actors/error.hpp"

#include <utility>

namespace troupe {

task_error::task_error(std::string type_name, std::string message, std::string worker)
  : error_base("task threw " + type_name + " on " + worker + ": " + message),
    remote_origin(std::move(type_name), std::move(worker)), message_(std::move(message)) {}

} // namespace troupe
