#include "troupe/actors/error.hpp"

#include <utility>

namespace troupe {

task_error::task_error(std::string type_name, std::string message, std::string worker)
  : error_base("task threw " + type_name + " on worker " + worker + ": " + message),
    type_name_(std::move(type_name)),
    message_(std::move(message)),
    worker_(std::move(worker)) {}

} // namespace troupe
