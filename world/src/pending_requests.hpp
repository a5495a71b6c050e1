// The requests a member has sent and not yet had answered: for each, the member it went to,
// where its answer goes, and, with a timeout, its deadline. An answer frees its entry at once;
// the member actor fails what passes its deadline (sweep). CAF's own request timeouts are not
// used: each stays queued in CAF's clock until it expires, answered or not (~190 B a call, 34 MiB
// for 200,000 calls with a 600 s timeout).
#pragma once

#include "troupe/world/detail/group_calls.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace troupe::detail {

class pending_requests {
public:
  using clock = std::chrono::steady_clock;

  struct entry {
    int to = 0;
    bytes_result reply;
    std::optional<std::chrono::milliseconds> timeout;
  };

  std::uint64_t add(int to, bytes_result reply, std::optional<std::chrono::milliseconds> timeout);
  /// The request's entry, removed; nullopt if it is gone (answered, failed, timed out).
  std::optional<entry> take(std::uint64_t id);
  /// Whether the request is still waiting for its answer.
  bool contains(std::uint64_t id) const { return entries_.contains(id); }
  /// Every request to `rank`, removed.
  std::vector<entry> take_to(int rank);
  /// Every request, removed.
  std::vector<entry> take_all();
  /// The requests whose deadline is at or before `now`, removed.
  std::vector<entry> take_expired(clock::time_point now);
  std::optional<clock::time_point> earliest_deadline() const;
  std::size_t size() const noexcept { return entries_.size(); }

private:
  struct waiting {
    entry what;
    std::optional<clock::time_point> deadline;
  };
  entry remove(std::map<std::uint64_t, waiting>::iterator at);

  std::uint64_t next_ = 0;
  std::map<std::uint64_t, waiting> entries_;
  std::set<std::pair<clock::time_point, std::uint64_t>> deadlines_;
};

} // namespace troupe::detail
