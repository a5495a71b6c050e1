// Who the members of a world are, as its store says: each member's record lives under its
// lease (it goes when the member's lease does, for everyone at once), a rank and a name are
// claimed together in one transaction (so neither names two members, with no coordinator to
// ask), and a watch tells every member of joins and losses in the store's order.
//
// Keys, under "/troupe/<world>/": "members/<rank>" holds the record, "names/<name>" the rank.
// What the store says is not trusted beyond its shape: a record that does not parse, is over
// its bound, or sits at a rank outside the world is ignored (and counted), never handed on.
#pragma once

#include "etcd_watch.hpp"
#include "lease_keeper.hpp"
#include "member_record.hpp"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace troupe::detail::etcd {

/// What claim() throws when the rank asked for is another member's (the name is free).
class rank_held : public state_error {
public:
  explicit rank_held(const std::string& message) : state_error(message) {}
};

/// A member whose record went (lost, or gone after it said it leaves), and the store's revision
/// it went at: what it held until then is in the store's history just before.
struct member_loss {
  member_record record;
  std::int64_t revision = 0;
};

struct registry_handlers {
  /// Another member's record appeared (a join, or one made before this member watched). No
  /// handler runs under the registry's lock; what one throws is reported on stderr.
  std::function<void(const member_record&)> joined;
  /// A member said it is leaving on purpose: its record goes next, and is no loss.
  std::function<void(const member_record&)> left;
  /// A member's record went: its lease expired or was revoked.
  std::function<void(const member_record&)> lost;
  /// This member's own lease is gone: the others have lost it, or will within the TTL.
  std::function<void(const std::string& why)> cut_off;
};

struct registry_settings {
  client_settings store;
  /// The world's name in the store: its keys' prefix.
  std::string world;
  /// Ranks run from 0 to max_world_size - 1.
  int max_world_size = 0;
  std::chrono::seconds ttl{3};
};

class member_registry {
public:
  /// The largest record taken from the store (256 devices of 64 bytes fit).
  static constexpr std::size_t max_record_bytes = 32 * 1024;

  /// Takes a lease (throws as the store does) and reads the members there are; handlers run on
  /// the watch's and the lease's threads, never under the registry's lock.
  member_registry(registry_settings settings, registry_handlers handlers);
  /// Revokes the lease: this member's record goes at once for the others.
  ~member_registry();

  /// Claims `record.rank` and `record.name` for this member, or, with rank -1, the lowest free
  /// rank from `first_free` up (the rank claimed is returned). Throws state_error naming who
  /// holds the name, or that the world is full; rank_held naming the rank asked for if another
  /// member holds it.
  int claim(member_record record, int first_free = 0);

  /// Says, in this member's record, that it is leaving on purpose (before its lease goes);
  /// throws as the store does if it has not answered within a third of the TTL.
  void leave();

  /// The members as this one last saw them (itself from its claim on), by rank.
  std::vector<member_record> members() const;
  /// The record at `rank` as this member last saw it (its own from its claim on).
  std::optional<member_record> member(int rank) const;
  /// This member's lease: keys bound to it go with its record.
  std::int64_t lease() const;
  /// Records from the store that were ignored (malformed, too large, out of range).
  std::uint64_t ignored() const;
  /// The last members whose records went, newest first (at most max_losses_kept; those found
  /// gone by a read after a compaction, at no known revision, are not among them).
  std::vector<member_loss> losses() const;
  static constexpr std::size_t max_losses_kept = 16;

private:
  std::string members_prefix() const;
  std::string member_key(int rank) const;
  std::string name_key(const std::string& name) const;
  /// The rank of a member's key, if it is one of this world's.
  std::optional<int> rank_of(std::string_view key) const;
  std::optional<member_record> record_of(const key_value& item);
  std::int64_t read();
  void take(const std::vector<change>& changes);
  void learn(const member_record& record);
  void forget(int rank, std::int64_t revision);
  /// Runs a handler; what it throws is reported, never let into the watch's or lease's thread.
  template <class Handler>
  void tell(const char* which, Handler handler) noexcept;
  std::string document_of(const member_record& record) const;
  bool try_claim(member_record& record);
  void set_own_rank(int rank);

  registry_settings settings_;
  registry_handlers handlers_;
  client store_;
  std::unique_ptr<lease_keeper> lease_;
  mutable std::mutex mutex_;
  std::map<int, member_record> members_;
  std::deque<member_loss> losses_; // newest first
  int own_rank_ = -1;
  std::uint64_t ignored_ = 0;
  std::unique_ptr<watch> watch_; // last: it stops first
};

} // namespace troupe::detail::etcd
