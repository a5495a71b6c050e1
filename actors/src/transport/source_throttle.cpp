#include "source_throttle.hpp"

#include <algorithm>

namespace troupe::detail {

double source_throttle::refilled(bucket& b, clock::time_point now) const {
  const std::chrono::duration<double> elapsed = now - b.updated;
  b.tokens = std::min(burst_, b.tokens + elapsed.count() * per_second_);
  b.updated = now;
  return b.tokens;
}

bool source_throttle::allows(const std::string& address) {
  std::lock_guard guard{mutex_};
  auto at = buckets_.find(address);
  return at == buckets_.end() || refilled(at->second, clock::now()) >= 1.0;
}

void source_throttle::failed(const std::string& address) {
  std::lock_guard guard{mutex_};
  const auto now = clock::now();
  auto at = buckets_.find(address);
  if (at == buckets_.end()) {
    make_room(now);
    at = buckets_.emplace(address, bucket{burst_, now}).first;
  }
  refilled(at->second, now);
  at->second.tokens = std::max(0.0, at->second.tokens - 1.0);
}

void source_throttle::make_room(clock::time_point now) {
  if (buckets_.size() < max_sources_)
    return;
  for (auto at = buckets_.begin(); at != buckets_.end();)
    at = refilled(at->second, now) >= burst_ ? buckets_.erase(at) : std::next(at);
  if (buckets_.size() >= max_sources_)
    buckets_.erase(buckets_.begin());
}

} // namespace troupe::detail
