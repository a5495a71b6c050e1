// The names of the rpc groups created in this process and not destroyed: one group of a name at
// a time. Creating threads and destroying ones meet here: it owns its lock.
#pragma once

#include <mutex>
#include <set>
#include <string>

namespace troupe::detail {

class group_names {
public:
  /// Takes `name`; false if a group of that name exists here already.
  bool add(const std::string& name);
  void remove(const std::string& name);

private:
  std::mutex mutex_;
  std::set<std::string> names_;
};

} // namespace troupe::detail
