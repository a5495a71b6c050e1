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

void barrier_table::remember_failure(const key& at, const std::vector<int>& ranks,
                                     std::string why) {
  auto [known, fresh] = failed_.try_emplace(at, failed_barrier{ranks, why});
  if (!fresh) {
    if (known->second.ranks != ranks) // the name's group made again with other members
      known->second = failed_barrier{ranks, std::move(why)};
    return;
  }
  failed_order_.push_back(at);
  if (failed_order_.size() > failures_kept) {
    failed_.erase(failed_order_.front());
    failed_order_.pop_front();
  }
}

const std::string* barrier_table::failure(const key& at, const std::vector<int>& ranks) const {
  const auto found = failed_.find(at);
  return found == failed_.end() || found->second.ranks != ranks ? nullptr : &found->second.why;
}

void barrier_table::forget_creation_failures() {
  std::erase_if(failed_,
                [](const auto& failed) { return failed.first.second == creation_barrier; });
  std::erase_if(failed_order_, [](const key& at) { return at.second == creation_barrier; });
}

} // namespace troupe::detail
