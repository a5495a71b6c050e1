// The calls this process's threads send straight to a member already reached, not through the
// member actor: a thread hand-off less each way (the caller wakes once, when its answer comes).
// Only calls without a timeout go this way; the others, and those to a member not reached yet,
// go through the member actor (pending_requests.hpp). A call here is a one-way message carrying
// its id, answered by a one-way message carrying it back (member_messages.hpp).
#pragma once

#include "troupe/world/detail/group_calls.hpp"

#include <caf/actor.hpp>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace troupe::detail {

class direct_calls {
public:
  /// For ranks 0 to `capacity` - 1 (world_options::max_world_size).
  explicit direct_calls(std::size_t capacity) : reached_(capacity) {}

  /// A call to `to`, registered under the id it returns with the handle to send it to; nullopt
  /// if `to` is not reached (or lost, or the world stopped): the call goes the slow way.
  struct ticket {
    std::uint64_t id = 0;
    caf::actor to;
  };
  std::optional<ticket> start(int to, bytes_result reply);
  /// The call `id`'s answer came from `from`: where it goes, if `from` is the member it went to.
  bytes_result answered(std::uint64_t id, int from);

  /// The member actor reached `rank`, or lost it: lost, the calls to it are returned to fail.
  void reached(int rank, caf::actor handle);
  std::vector<bytes_result> lost(int rank);
  /// Rank 0 is lost: no new call goes this way (the world is gone).
  void close();
  /// The world stops: every call still waiting, to fail.
  std::vector<bytes_result> stop();

private:
  struct waiting {
    int to = 0;
    bytes_result reply;
  };
  std::mutex mutex_;
  bool closed_ = false;
  std::vector<caf::actor> reached_; // by rank
  std::uint64_t next_ = 0;
  std::map<std::uint64_t, waiting> waiting_;
};

} // namespace troupe::detail
