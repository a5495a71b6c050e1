#include "group_names.hpp"

namespace troupe::detail {

bool group_names::add(const std::string& name) {
  std::lock_guard guard{mutex_};
  return names_.insert(name).second;
}

void group_names::remove(const std::string& name) {
  std::lock_guard guard{mutex_};
  names_.erase(name);
}

} // namespace troupe::detail
