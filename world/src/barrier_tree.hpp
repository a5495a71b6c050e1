// A group's creation, and its barriers when its world spans hosts (on one host they meet in
// shared memory: host_barrier.hpp), met along a tree of its members instead of at rank 0: member p
// of the group (its place in the group's ranks) waits for its children 16p + 1 .. 16p + 16 to
// arrive, then tells its parent (p - 1) / 16, and once the root has heard from everyone the release
// comes back down the same way. Each member talks to at most seventeen others, and a barrier of n
// members takes 2 log16 n hops (six at 1,024), with no member handling more than 17 arrivals.
//
// The table of barriers in progress on this member. It belongs to the member actor and is only
// touched on its thread (member_barriers.cpp), so it has no lock of its own.
#pragma once

#include "member_messages.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace troupe::detail {

/// A group's creation is its barrier 0 (its barriers count from 1): met along the same tree, so
/// that rank 0 hears nothing of a group it is not in. Unlike a barrier's, a member may arrive at
/// it again (after its creation timed out there), and its failure is remembered only until a
/// member lost comes back (then the group may be made again).
constexpr std::uint64_t creation_barrier = 0;

/// Where the member at `position` of a group of `size` sits in its barrier tree.
struct tree_place {
  std::optional<std::size_t> parent; // none at the root
  std::size_t first_child = 0, children = 0;
};
tree_place place_in_tree(std::size_t position, std::size_t size) noexcept;

/// One barrier in progress here: who has arrived, and who waits for its end.
struct barrier_progress {
  std::vector<int> ranks; // the group's world ranks, as the first arrival named them
  bool arrived_here = false;
  bool told_parent = false;
  bytes_result waiting_here; // this member's caller, once it has arrived
  std::vector<int> arrived_children; // their world ranks
  std::vector<reply_promise> children; // their arrivals, answered at the release
};

class barrier_table {
public:
  /// How many barriers may be in progress on one member: a member that sends arrivals for
  /// barriers nobody else meets cannot grow the table without bound.
  static constexpr std::size_t max_in_progress = 16'384;
  /// How many failed barriers are remembered, so that a member or child arriving late at one
  /// hears it failed rather than waits.
  static constexpr std::size_t failures_kept = 1'024;

  using key = std::pair<std::string, std::uint64_t>; // group, barrier number

  /// The barrier, made if new; nullptr when the table is full.
  barrier_progress* find_or_add(const key& at);
  barrier_progress* find(const key& at);
  /// Takes the barrier out of the table (it ended).
  std::optional<barrier_progress> take(const key& at);
  /// Every barrier in progress (their keys).
  std::vector<key> keys() const;

  /// The barrier of `ranks` failed (`why`): remembered, the oldest forgotten past failures_kept.
  void remember_failure(const key& at, const std::vector<int>& ranks, std::string why);
  /// Why the barrier of `ranks` failed, if it is remembered to have (a group made again with
  /// other members under the same name has not).
  const std::string* failure(const key& at, const std::vector<int>& ranks) const;
  /// Forgets every group creation's failure (a member lost came back: they may be tried again).
  void forget_creation_failures();

private:
  struct failed_barrier {
    std::vector<int> ranks;
    std::string why;
  };
  std::map<key, barrier_progress> in_progress_;
  std::map<key, failed_barrier> failed_;
  std::deque<key> failed_order_;
};

} // namespace troupe::detail
