// Who holds each paired value and service this member has looked up, so that rank 0 (or the
// store) is asked only the first time. A service's call goes straight to the owner remembered
// (the call itself fails with key_error if the service has gone); a value's lookup (get_paired,
// is_paired) and is_registered ask the owner remembered whether it still holds the key, and
// ask rank 0 again only if not. An entry is forgotten when its owner says it no longer holds
// the key, when rank 0 says a service was withdrawn, and when its owner is lost or leaves.
#pragma once

#include "troupe/world/detail/group_calls.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

namespace troupe::detail {

class key_owners {
public:
  std::optional<int> find(key_table table, const std::string& group, const std::string& key) const;

  /// What forgetting has happened so far: read it before asking rank 0, and give it to
  /// remember with the answer.
  std::uint64_t generation() const;
  /// Keeps `rank` as the owner of `key`, unless anything was forgotten since `asked_at` (then
  /// the answer may predate a withdrawal whose notice has already come and gone).
  void remember(key_table table, const std::string& group, const std::string& key, int rank,
                std::uint64_t asked_at);

  void forget(key_table table, const std::string& group, const std::string& key);
  void forget_rank(int rank);

private:
  mutable std::mutex mutex_;
  std::map<std::tuple<key_table, std::string, std::string>, int> owners_; // by (table, group, key)
  std::uint64_t generation_ = 0;
};

} // namespace troupe::detail
