// The member actor's handles of the other members, by rank, and the rank of each handle's
// member (a message's sender is found in one lookup, not a walk over every rank: it runs for
// every call a member serves).
#pragma once

#include "store_news.hpp"

#include <caf/actor.hpp>
#include <caf/node_id.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace troupe::detail {

/// One incarnation of a member: its process and its member actor there. A member that joins
/// again is a new one even from its old process (world_options::rejoin: a new member actor).
struct member_identity {
  caf::node_id node;
  caf::actor_id actor = 0;
  static member_identity of(const caf::actor& handle) { return {handle.node(), handle.id()}; }
  static member_identity of(const caf::strong_actor_ptr& sender) {
    return {sender->node(), sender->id()};
  }
  /// As a store's record names it.
  std::string text() const { return incarnation_of(node, actor); }
  bool operator==(const member_identity&) const = default;
  bool operator<(const member_identity& other) const {
    return node != other.node ? node < other.node : actor < other.actor;
  }
};

class peer_table {
public:
  void resize(std::size_t ranks) { by_rank_.resize(ranks); }
  std::size_t size() const noexcept { return by_rank_.size(); }
  /// The handle of the member at `rank`; empty until it is reached.
  const caf::actor& operator[](std::size_t rank) const { return by_rank_[rank]; }

  /// `handle` is the member at `rank` from now on (replacing the one before).
  void set(int rank, caf::actor handle) {
    reset(rank);
    by_identity_.insert_or_assign(member_identity::of(handle), rank);
    by_rank_[static_cast<std::size_t>(rank)] = std::move(handle);
  }
  /// Forgets the handle at `rank` (its old process's, once the rank is taken again).
  void reset(int rank) {
    auto& slot = by_rank_[static_cast<std::size_t>(rank)];
    if (const auto known = slot ? by_identity_.find(member_identity::of(slot)) : by_identity_.end();
        known != by_identity_.end() && known->second == rank)
      by_identity_.erase(known);
    slot = nullptr;
  }
  /// Forgets every handle: kept in state, they would keep the actor's system from shutting down.
  void clear() {
    by_rank_.clear();
    by_identity_.clear();
  }
  /// The rank of the member whose handle this is, if it is one of the table's.
  std::optional<int> rank_of(const member_identity& identity) const {
    const auto found = by_identity_.find(identity);
    return found == by_identity_.end() ? std::nullopt : std::optional{found->second};
  }

private:
  std::vector<caf::actor> by_rank_;
  std::map<member_identity, int> by_identity_;
};

} // namespace troupe::detail
