// How many collective groups of each set of world ranks this member has made. Every member of a
// set counts its groups, so the n-th group of a set has one name on all of them, a member that
// joined the world after others made groups of other sets included (none has made a group of a
// set that holds its rank before it came). Users' threads make groups at once: it owns its lock.
#pragma once

#include <map>
#include <mutex>
#include <vector>

namespace troupe::detail {

class collective_numbers {
public:
  /// The number of the next group of `ranks` (sorted) here: 0 for the first.
  int next(const std::vector<int>& ranks) {
    std::lock_guard guard{mutex_};
    return counts_[ranks]++;
  }

private:
  std::mutex mutex_;
  std::map<std::vector<int>, int> counts_;
};

} // namespace troupe::detail
