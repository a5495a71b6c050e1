// Who offers each service this member has called: a registered call asks rank 0 only the first
// time. An entry is forgotten when rank 0 says the key was withdrawn, and when its owner is lost
// or leaves; a key that moves to another member is then looked up again.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace troupe::detail {

class service_owners {
public:
  std::optional<int> find(const std::string& group, const std::string& key) const;

  /// What forgetting has happened so far: read it before asking rank 0, and give it to
  /// remember with the answer.
  std::uint64_t generation() const;
  /// Keeps `rank` as the owner of `key`, unless anything was forgotten since `asked_at` (then
  /// the answer may predate a withdrawal whose notice has already come and gone).
  void remember(const std::string& group, const std::string& key, int rank, std::uint64_t asked_at);

  void forget(const std::string& group, const std::string& key);
  void forget_rank(int rank);

private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, int> owners_; // by (group, key)
  std::uint64_t generation_ = 0;
};

} // namespace troupe::detail
