#include "troupe/actors/remote_exception.hpp"

#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>

namespace troupe::detail {

namespace {

struct exception_types {
  std::mutex mutex; // types register at static initialisation, perhaps from many TUs
  std::map<std::string, exception_rebuilder> rebuilders;
};

exception_types& registry() {
  static exception_types types;
  return types;
}

template <class... E>
bool register_all() {
  return (register_exception<E>() && ...);
}

const bool standard_types_registered =
  register_all<std::logic_error, std::invalid_argument, std::domain_error, std::length_error,
               std::out_of_range, std::runtime_error, std::range_error, std::overflow_error,
               std::underflow_error, troupe::invalid_argument, troupe::state_error,
               troupe::timeout_error, troupe::pool_closed, troupe::serialization_error,
               troupe::worker_lost, troupe::queue_closed, troupe::capacity_error, troupe::peer_lost,
               troupe::network_error, troupe::key_error, troupe::actor_stopped,
               troupe::partition_error>();

} // namespace

std::optional<exception_rebuilder> registered_rebuilder(const std::string& type) {
  (void)standard_types_registered;
  auto& types = registry();
  std::lock_guard guard{types.mutex};
  if (const auto it = types.rebuilders.find(type); it != types.rebuilders.end())
    return it->second;
  return std::nullopt;
}

void add_exception_type(const std::string& type, exception_rebuilder rebuild) {
  auto& types = registry();
  std::lock_guard guard{types.mutex};
  types.rebuilders.emplace(type, rebuild);
}

} // namespace troupe::detail
