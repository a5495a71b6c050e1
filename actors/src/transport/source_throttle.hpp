// Failed proofs per source address, counted in token buckets: a source that has spent its burst
// of failures earns one back per 1/rate seconds, and until it has one its connections are closed
// at once. Guessing a secret over the network goes at `rate` guesses a second at most. The table
// is bounded: past `max_sources` addresses, those with full buckets are forgotten, then any.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace troupe::detail {

class source_throttle {
public:
  source_throttle(double burst, double per_second, std::size_t max_sources = 4096)
    : burst_(burst), per_second_(per_second), max_sources_(max_sources) {}

  /// Whether `address` may try a handshake now.
  bool allows(const std::string& address);
  /// `address` failed to prove the secret.
  void failed(const std::string& address);

private:
  using clock = std::chrono::steady_clock;
  struct bucket {
    double tokens;
    clock::time_point updated;
  };
  double refilled(bucket& b, clock::time_point now) const;
  void make_room(clock::time_point now);

  const double burst_;
  const double per_second_;
  const std::size_t max_sources_;
  std::mutex mutex_;
  std::unordered_map<std::string, bucket> buckets_;
};

} // namespace troupe::detail
