#include "barrier_tree.hpp"

#include <algorithm>

namespace troupe::detail {

namespace {

/// Children per member: a lower tree (fewer hops) against more arrivals for each member to wait
/// for. Sixteen keeps a barrier of 1,024 members at three levels (six hops); on two cores, where
/// every message costs a process a wake-up, 64 members met in 12 ms at sixteen, 16-17 ms at four
/// or eight.
constexpr std::size_t arity = 16;

} // namespace

tree_place place_in_tree(std::size_t position, std::size_t size) noexcept {
  tree_place place;
  if (position > 0)
    place.parent = (position - 1) / arity;
  place.first_child = arity * position + 1;
  if (place.first_child < size)
    place.children = std::min(arity, size - place.first_child);
  return place;
}

barrier_progress* barrier_table::find_or_add(const key& at) {
  if (auto* known = find(at))
    return known;
  if (in_progress_.size() >= max_in_progress)
    return nullptr;
  return &in_progress_[at];
}

barrier_progress* barrier_table::find(const key& at) {
  const auto found = in_progress_.find(at);
  return found == in_progress_.end() ? nullptr : &found->second;
}

std::optional<barrier_progress> barrier_table::take(const key& at) {
  auto node = in_progress_.extract(at);
  if (node.empty())
    return std::nullopt;
  return std::move(node.mapped());
}

std::vector<barrier_table::key> barrier_table::keys() const {
  std::vector<key> all;
  for (const auto& [at, progress] : in_progress_)
    all.push_back(at);
  return all;
}

void barrier_table::remember_failure(const key& at, std::string why) {
  if (!failed_.emplace(at, std::move(why)).second)
    return;
  failed_order_.push_back(at);
  if (failed_order_.size() > failures_kept) {
    failed_.erase(failed_order_.front());
    failed_order_.pop_front();
  }
}

const std::string* barrier_table::failure(const key& at) const {
  const auto found = failed_.find(at);
  return found == failed_.end() ? nullptr : &found->second;
}

} // namespace troupe::detail
