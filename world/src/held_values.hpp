// What this member holds for the others, by (group, key): the values paired to it and the
// services it offers, and the outcomes it keeps for remote references (each freed when the member
// it was kept for releases it, or is gone). Users' threads add to it while executor threads
// serve calls from it: it owns its lock, held only while an entry is looked up or changed, never
// while a value's task runs.
#pragma once

#include "troupe/world/detail/group_calls.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace troupe::detail {

class held_values {
public:
  /// Outcomes one member may have kept here at once (remote references it holds).
  static constexpr std::size_t max_kept_per_member = 65'536;

  /// Holds `value` under (group, key); key_error if a value is paired there already.
  void add_paired(const std::string& group, const std::string& key, paired_value value);
  /// Offers `service` under (group, key); key_error if one is registered there already.
  void add_service(const std::string& group, const std::string& key, chunk_invoker service);
  /// Drops the paired value or service under (group, key), if any.
  void remove(key_table table, const std::string& group, const std::string& key);

  std::optional<paired_value> paired(const std::string& group, const std::string& key) const;
  std::optional<chunk_invoker> service(const std::string& group, const std::string& key) const;
  /// Whether a paired value or service is held under (group, key), nothing copied.
  bool holds(key_table table, const std::string& group, const std::string& key) const;

  /// Whether member `owner` may have one more outcome kept here.
  bool has_room_for(int owner) const;
  /// Keeps `payload` for member `owner`; the id it is fetched and released by.
  std::string keep(int owner, bytes payload);
  std::optional<bytes> kept(const std::string& id) const;
  void release(const std::string& id);
  /// Member `owner` is gone: what was kept for it goes.
  void forget_owner(int owner);

private:
  using key = std::pair<std::string, std::string>; // (group, key)
  struct kept_value {
    int owner = -1;
    bytes payload;
  };

  mutable std::mutex mutex_;
  std::map<key, paired_value> paired_;
  std::map<key, chunk_invoker> services_;
  std::map<std::string, kept_value> kept_;
  std::map<int, std::size_t> kept_by_owner_; // how many of `kept_` each member has
  std::uint64_t next_kept_ = 0;
};

} // namespace troupe::detail
