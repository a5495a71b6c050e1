#include "service_owners.hpp"

namespace troupe::detail {

std::optional<int> service_owners::find(const std::string& group, const std::string& key) const {
  std::lock_guard guard{mutex_};
  if (auto at = owners_.find({group, key}); at != owners_.end())
    return at->second;
  return std::nullopt;
}

std::uint64_t service_owners::generation() const {
  std::lock_guard guard{mutex_};
  return generation_;
}

void service_owners::remember(const std::string& group, const std::string& key, int rank,
                              std::uint64_t asked_at) {
  std::lock_guard guard{mutex_};
  if (generation_ == asked_at)
    owners_.insert_or_assign({group, key}, rank);
}

void service_owners::forget(const std::string& group, const std::string& key) {
  std::lock_guard guard{mutex_};
  ++generation_;
  owners_.erase({group, key});
}

void service_owners::forget_rank(int rank) {
  std::lock_guard guard{mutex_};
  ++generation_;
  std::erase_if(owners_, [rank](const auto& entry) { return entry.second == rank; });
}

} // namespace troupe::detail
