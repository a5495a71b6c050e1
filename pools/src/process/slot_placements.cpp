#include "process/slot_placements.hpp"

#include "troupe/actors/error.hpp"

namespace troupe::detail {

void slot_placements::on_added(std::function<void(std::size_t)> hand_over) {
  std::lock_guard guard{hand_over_mutex_};
  hand_over_ = std::move(hand_over);
}

std::uint64_t slot_placements::add(std::size_t slot, actor_channel channel) {
  std::uint64_t id = 0;
  {
    std::lock_guard guard{mutex_};
    if (!closed_.empty())
      throw pool_closed(closed_);
    id = next_id_++;
    entries_.emplace(id, entry{slot, std::move(channel), 0});
    waiting_.fetch_add(1);
  }
  std::lock_guard guard{hand_over_mutex_};
  if (hand_over_)
    hand_over_(slot);
  return id;
}

void slot_placements::remove(std::uint64_t id) noexcept {
  std::lock_guard guard{mutex_};
  const auto at = entries_.find(id);
  if (at == entries_.end())
    return;
  if (at->second.placed_in == 0)
    waiting_.fetch_sub(1);
  entries_.erase(at);
}

pid_t slot_placements::placed_in(std::uint64_t id) const {
  std::lock_guard guard{mutex_};
  const auto at = entries_.find(id);
  return at == entries_.end() ? 0 : at->second.placed_in;
}

bool slot_placements::pending(std::size_t slot) const noexcept {
  if (waiting_.load() == 0)
    return false;
  std::lock_guard guard{mutex_};
  for (const auto& [id, placed] : entries_)
    if (placed.slot == slot && placed.placed_in == 0)
      return true;
  return false;
}

std::vector<actor_channel> slot_placements::take(std::size_t slot, pid_t pid) {
  std::lock_guard guard{mutex_};
  std::vector<actor_channel> taken;
  for (auto& [id, placed] : entries_)
    if (placed.slot == slot && placed.placed_in == 0) {
      placed.placed_in = pid;
      waiting_.fetch_sub(1);
      taken.push_back(placed.channel);
    }
  return taken;
}

std::string slot_placements::closed_reason() const {
  std::lock_guard guard{mutex_};
  return closed_;
}

void slot_placements::close(std::string why) {
  {
    std::lock_guard guard{mutex_};
    if (closed_.empty())
      closed_ = std::move(why);
  }
  std::lock_guard guard{hand_over_mutex_};
  hand_over_ = nullptr;
}

} // namespace troupe::detail
