#include "key_owners.hpp"

namespace troupe::detail {

std::optional<int> key_owners::find(key_table table, const std::string& group,
                                    const std::string& key) const {
  std::lock_guard guard{mutex_};
  if (auto at = owners_.find({table, group, key}); at != owners_.end())
    return at->second;
  return std::nullopt;
}

std::uint64_t key_owners::generation() const {
  std::lock_guard guard{mutex_};
  return generation_;
}

void key_owners::remember(key_table table, const std::string& group, const std::string& key,
                          int rank, std::uint64_t asked_at) {
  std::lock_guard guard{mutex_};
  if (generation_ == asked_at)
    owners_.insert_or_assign({table, group, key}, rank);
}

void key_owners::forget(key_table table, const std::string& group, const std::string& key) {
  std::lock_guard guard{mutex_};
  ++generation_;
  owners_.erase({table, group, key});
}

void key_owners::forget_rank(int rank) {
  std::lock_guard guard{mutex_};
  ++generation_;
  std::erase_if(owners_, [rank](const auto& entry) { return entry.second == rank; });
}

} // namespace troupe::detail
