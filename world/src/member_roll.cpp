#include "member_roll.hpp"

namespace troupe::detail {

void joined_members::add(int rank, const std::string& name, const caf::node_id& node) {
  std::lock_guard guard{mutex_};
  names_[rank] = name;
  nodes_.push_back(node);
}

std::string joined_members::missing(int world_size) const {
  std::lock_guard guard{mutex_};
  std::string missing;
  for (int rank = 1; rank < world_size; ++rank)
    if (!names_.contains(rank))
      missing += (missing.empty() ? "" : ", ") + std::to_string(rank);
  return missing;
}

std::vector<caf::node_id> joined_members::nodes() const {
  std::lock_guard guard{mutex_};
  return nodes_;
}

void gone_members::gone(int rank, bool left) {
  std::lock_guard guard{mutex_};
  gone_.emplace(rank, left);
}

std::optional<int> gone_members::first_gone(const std::vector<int>& ranks) const {
  std::lock_guard guard{mutex_};
  std::optional<int> left;
  for (int rank : ranks)
    if (const auto at = gone_.find(rank); at != gone_.end()) {
      if (!at->second)
        return rank;
      left = left ? left : rank;
    }
  return left;
}

bool gone_members::is_gone(int rank) const {
  std::lock_guard guard{mutex_};
  return gone_.contains(rank);
}

gone_as gone_members::how_gone(int rank) const {
  std::lock_guard guard{mutex_};
  const auto found = gone_.find(rank);
  if (found == gone_.end())
    return gone_as::present;
  return found->second ? gone_as::left : gone_as::lost;
}

void gone_members::returned(int rank) {
  std::lock_guard guard{mutex_};
  gone_.erase(rank);
}

int gone_members::count() const {
  std::lock_guard guard{mutex_};
  return static_cast<int>(gone_.size());
}

} // namespace troupe::detail
