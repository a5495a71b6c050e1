// The figure benchmarks report of a set of timed rounds.
#pragma once

#include <algorithm>
#include <vector>

namespace troupe::bench {

/// The middle of `v` once sorted (the upper middle of an even count); 0 when empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace troupe::bench
