// What a change of membership runs: the callbacks users gave (world::on_member_lost,
// world::on_member_joined). Users' threads add them while the member actor runs them: the list
// owns its lock, and runs a copy, so that a callback may add another.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace troupe::detail {

class member_callbacks {
public:
  using callback = std::function<void(const std::string& name, int rank)>;

  /// `kind` ("on_member_lost") names the callbacks in what a throwing one reports.
  explicit member_callbacks(const char* kind) : kind_(kind) {}

  void add(callback added);
  /// Runs each callback for member `name` of `rank`; one that throws is reported on stderr and
  /// the others still run.
  void run(const std::string& name, int rank) const noexcept;

private:
  const char* kind_;
  mutable std::mutex mutex_;
  std::vector<callback> callbacks_;
};

} // namespace troupe::detail
