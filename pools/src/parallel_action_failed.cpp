#include "troupe/pools/parallel_action_failed.hpp"

#include "troupe/actors/task.hpp"

#include <string>

namespace troupe {

namespace {

std::string describe(const std::pair<std::size_t, std::exception_ptr>& failure) {
  std::string what = "item " + std::to_string(failure.first) + ": ";
  try {
    std::rethrow_exception(failure.second);
  } catch (...) {
    const auto why = detail::current_failure();
    return what + why.type + ": " + why.message;
  }
}

std::string message_of(const std::vector<std::pair<std::size_t, std::exception_ptr>>& failures,
                       std::size_t items) {
  if (failures.empty())
    return "parallel action failed";
  return "parallel action failed: " + std::to_string(failures.size()) + " of " +
         std::to_string(items) + " items failed; the first, " + describe(failures.front());
}

} // namespace

parallel_action_failed::parallel_action_failed(
  std::vector<std::pair<std::size_t, std::exception_ptr>> failures, std::size_t items)
  : error_base(message_of(failures, items)), failures_(std::move(failures)), items_(items) {}

} // namespace troupe
