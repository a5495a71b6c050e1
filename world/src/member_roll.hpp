// Who has come and who has gone, as this process's threads need to know it (the member actor
// keeps its own view): rank 0's record of the joins while the world forms, and every member's of
// the members gone and of the callbacks a loss runs. The member actor writes both while users'
// threads read them: each owns its lock.
#pragma once

#include "member_callbacks.hpp"
#include "roster.hpp"

#include <caf/node_id.hpp>

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace troupe::detail {

/// Rank 0: the members that have joined so far, and their processes.
class joined_members {
public:
  void add(int rank, const std::string& name, const caf::node_id& node);
  /// The ranks 1..world_size-1 that have not joined, as "2, 5".
  std::string missing(int world_size) const;
  std::vector<caf::node_id> nodes() const;

private:
  mutable std::mutex mutex_;
  std::map<int, std::string> names_;
  std::vector<caf::node_id> nodes_;
};

/// The members that are gone (lost, or left on purpose), and what a loss runs.
class gone_members {
public:
  void add_lost_callback(member_callbacks::callback callback) { lost_.add(std::move(callback)); }
  /// `rank` is gone; `left` if it said it was leaving.
  void gone(int rank, bool left);
  /// The first of `ranks` that is gone, if any, one that was lost before one that left (which
  /// may have left because of the loss).
  std::optional<int> first_gone(const std::vector<int>& ranks) const;
  bool is_gone(int rank) const;
  /// Whether `rank` is here, lost, or left.
  gone_as how_gone(int rank) const;
  /// `rank` joined again, as a new process.
  void returned(int rank);
  int count() const;
  /// Runs every lost callback for member `name` of `rank` (member_callbacks::run).
  void tell_lost(const std::string& name, int rank) const noexcept { lost_.run(name, rank); }

private:
  member_callbacks lost_{"on_member_lost"};
  mutable std::mutex mutex_;
  std::map<int, bool> gone_; // rank, and whether it left (rather than was lost)
};

} // namespace troupe::detail
