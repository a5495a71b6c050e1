// A world's tables in etcd (world_options::store), as one member sees and changes them: its
// record under its lease (store/member_registry.hpp), whose news about the others go to the
// member actor in the store's order; the world's id; the keys and who holds them. A world with a
// store has no rank 0 in charge: ranks and names are claimed in the store, a member is lost when
// its lease goes, and the coordinator (member_store.cpp) is the oldest member there is. One per
// incarnation of a member: joining again is a new lease.
//
// What the store says is trusted no further than its shape: a record names where a member
// listens, but a connection there is taken for that member only once its handshake proved the
// member's name (and its incarnation matches the record).
#pragma once

#include "coordinator.hpp"
#include "store/member_registry.hpp"
#include "store/store_address.hpp"
#include "store_news.hpp"

#include "troupe/actors/network.hpp"
#include "troupe/world/world_options.hpp"

#include <caf/actor.hpp>

#include <memory>
#include <string>
#include <vector>

namespace troupe::detail {

/// The TTL of a member's lease: a member whose lease is not renewed for this long is lost.
inline constexpr std::chrono::seconds store_lease_ttl{3};

/// Which world a member's store holds: the id its founders share (which names its inboxes), and
/// whether it had formed already.
struct stored_world {
  std::string id;
  bool formed = false;
};

class store_seat {
public:
  /// Reaches the store at `where` (with TLS, `options.tls`'s certificate, key and CA), takes
  /// this member's lease and reads the members there, whose news go to `member` from now on.
  /// Throws network_error if no server answers.
  store_seat(const world_options& options, const store_location& where, caf::actor member);
  /// Revokes this member's lease (unless it is gone): its record and keys go at once.
  ~store_seat();
  store_seat(const store_seat&) = delete;
  store_seat& operator=(const store_seat&) = delete;

  /// Where a member of the world at `where` listens: loopback when every server of the store
  /// is on loopback, else every interface.
  static endpoint listen_address(const store_location& where);
  /// The host others reach this member at: the local address of its route to the store.
  std::string advertised_host() const;

  /// The world this store holds: that of the formed world, or the id its founders share.
  stored_world identify();
  /// Claims `record`'s rank and name for this member (told to the member actor as claimed,
  /// with `formed_before`); throws invalid_argument naming who holds either.
  void claim(etcd::member_record record, bool formed_before);
  /// Says in the store that this member took part in forming world `id` (a joiner then knows
  /// the world formed).
  void mark_formed(const std::string& id, int rank);
  /// Says in the store that this member leaves on purpose (unless its lease is gone).
  void leave() noexcept;

  /// `op` on `table` of `group`'s keys, for member `rank`: what rank 0's coordinator::keys
  /// answers in a world without a store (a lookup: the holder's rank, serialized). A key is
  /// bound to its holder's lease: it goes with its holder, and a lookup then fails with
  /// peer_lost naming the member, as rank 0's table says.
  reply_bytes keys(key_operation op, key_table table, const std::string& group,
                   const std::string& key, int rank);

  /// The members the store holds, as this member last heard.
  std::vector<etcd::member_record> members() const { return registry_->members(); }

  /// Requests this member sent the store other than renewing its lease and watching.
  std::uint64_t requests() const;

private:
  std::string prefix() const;
  std::string key_name(key_table table, const std::string& group, const std::string& key) const;
  /// A lookup of key `name` found nothing: peer_lost if a member that went held it until then,
  /// else key_error.
  [[noreturn]] void throw_not_found(const std::string& name, const std::string& what,
                                    const std::string& where);

  const store_location where_;
  const int max_world_size_;
  const caf::actor member_;
  etcd::client client_;
  std::unique_ptr<etcd::member_registry> registry_;
};

} // namespace troupe::detail
