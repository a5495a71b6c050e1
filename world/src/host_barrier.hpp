// A group's barriers met in shared memory, when the whole world is on this host
// (world_core::meets_on_host): each member adds itself to the barrier's count in one shared
// object, the last to come releases everyone with one futex wake-up, and nobody's thread but the
// caller's takes part. Along the tree (barrier_tree.hpp) a member's barrier costs five thread
// hand-offs, each a wake-up of one of the host's processes; here it costs its own.
//
// The object holds a window of slots, barrier n in slot (n - 1) % slots: a member that timed out
// at barrier n has arrived there (as along the tree) and may go on to the next ones, up to the
// window, before the others have met n. It also holds the last barrier each member arrived at:
// a member of the group gone (lost, or left) fails the barriers it had not arrived at, and only
// those (as along the tree, a member that arrived may go), the same way in every process. The
// first to learn of it (a world core told of a loss, host_barriers below, or a waiter looking
// at the membership now and then) marks the object failed from that barrier on, naming the
// member, and wakes everyone.
//
// Every member maps the object before it arrives at the group's creation, and unlinks its name
// once the creation returns: by then all have it mapped, and nothing is left in /dev/shm when
// the last goes, whatever way it goes. A creation refused unlinks it too (the name hashes the
// members, so a member refused for naming others has an object of its own); one that timed out
// here leaves it for the others until this member's world stops.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace troupe::detail {

class host_barrier {
public:
  /// Barriers a member may be ahead of the slowest by (it timed out at the ones between).
  static constexpr std::size_t slots = 64;

  /// The object of group `group` of world ranks `ranks` (in the group's order) in world
  /// `world_id`, for the member of rank `self`, made by the first member to open it;
  /// state_error naming /dev/shm if it cannot be, or if it was made for a group of another size.
  static std::shared_ptr<host_barrier> open(const std::string& world_id, const std::string& group,
                                            std::vector<int> ranks, int self);
  ~host_barrier();
  host_barrier(const host_barrier&) = delete;
  host_barrier& operator=(const host_barrier&) = delete;

  /// Takes the object's name away (its members have it mapped).
  void unlink() noexcept;
  /// Whether every member has opened this object (asked once the group's creation returned,
  /// when all have opened theirs): false where some member's /dev/shm is not this process's (a
  /// container of its own on the same network), and then false for every member alike.
  bool opened_by_all() const noexcept;
  const std::string& name() const noexcept { return name_; }

  enum class outcome { met, timed_out, failed, stopped };
  /// What a waiter looks at now and then: the rank of a member of the group that is gone, if
  /// one is, and whether this member's world has stopped.
  struct watch {
    /// The first of these world ranks that is gone, if any.
    std::function<std::optional<int>(const std::vector<int>&)> first_gone;
    std::function<bool()> stopped;
  };
  /// Arrives at barrier `n` (1, 2, ...: this member's count of its barriers) and waits until
  /// every member has, or `until` passed (still arrived), or it failed (failed_rank() says
  /// who) or this member's world stopped.
  outcome meet(std::uint64_t n, std::optional<std::chrono::steady_clock::time_point> until,
               const watch& looks);

  /// Member `rank` of the group is gone: the barriers it had not arrived at fail, everywhere.
  void fail(int rank) noexcept;
  /// The gone member that failed barrier `n`, if one did.
  std::optional<int> failed_by(std::uint64_t n) const noexcept;

private:
  struct slot_state;
  struct layout;
  using time_point = std::chrono::steady_clock::time_point;
  host_barrier(std::string name, std::vector<int> ranks, std::size_t self, void* base,
               std::size_t bytes);
  /// Waits until `slot` has met barrier `target` (true), or `why` another outcome, for a
  /// member waiting at barrier `n`.
  bool wait_for(slot_state& slot, std::uint64_t target, std::uint64_t n,
                std::optional<time_point> until, const watch& looks, outcome& why);
  struct member_record;
  /// What the object keeps of the member at `place` of the group.
  member_record& record(std::size_t place) const noexcept;
  static std::size_t bytes_for(std::size_t members) noexcept;
  /// Maps the object `name` of `bytes` bytes (made if new); state_error if it cannot be, or if it
  /// is of another size.
  static void* map_object(const std::string& name, const std::string& group, std::size_t bytes,
                          std::size_t members);
  /// Takes away the names of objects whose members' processes are all gone (a member killed
  /// while its group was being made leaves the name behind).
  static void collect_orphans() noexcept;
  static bool orphaned(const void* base, std::size_t size) noexcept;
  /// The group's members that had not arrived at barrier `n`.
  std::vector<int> missing_at(std::uint64_t n) const;

  std::string name_;
  std::vector<int> ranks_;
  std::size_t self_; // this member's place in ranks_
  layout* shared_;
  std::size_t bytes_;
};

/// The barrier objects of this member's groups, told when a member is lost so that their
/// waiters, here and in the other members, wake at once. Owns its lock: groups are made on
/// users' threads while the member actor reports losses.
class host_barriers {
public:
  /// Also forgets the objects of groups gone since.
  void add(const std::shared_ptr<host_barrier>& barrier);
  void lost(int rank) noexcept;
  /// An object whose group's creation timed out here: the others may still make the group with
  /// this member's arrival and need the name, so it goes when this member's world stops (the
  /// creation cannot complete after that).
  void unlink_at_stop(std::string name);
  void stop() noexcept;

private:
  std::mutex mutex_;
  std::vector<std::weak_ptr<host_barrier>> barriers_;
  std::vector<std::string> names_to_unlink_;
};

} // namespace troupe::detail
