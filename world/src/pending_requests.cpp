#include "pending_requests.hpp"

namespace troupe::detail {

std::uint64_t pending_requests::add(int to, bytes_result reply,
                                    std::optional<std::chrono::milliseconds> timeout) {
  const auto id = next_++;
  std::optional<clock::time_point> deadline;
  if (timeout) {
    deadline = clock::now() + *timeout;
    deadlines_.emplace(*deadline, id);
  }
  entries_.emplace(id, waiting{entry{to, std::move(reply), timeout}, deadline});
  return id;
}

pending_requests::entry pending_requests::remove(std::map<std::uint64_t, waiting>::iterator at) {
  if (at->second.deadline)
    deadlines_.erase({*at->second.deadline, at->first});
  auto what = std::move(at->second.what);
  entries_.erase(at);
  return what;
}

std::optional<pending_requests::entry> pending_requests::take(std::uint64_t id) {
  auto at = entries_.find(id);
  if (at == entries_.end())
    return std::nullopt;
  return remove(at);
}

std::vector<pending_requests::entry> pending_requests::take_to(int rank) {
  std::vector<entry> taken;
  for (auto at = entries_.begin(); at != entries_.end();) {
    auto next = std::next(at);
    if (at->second.what.to == rank)
      taken.push_back(remove(at));
    at = next;
  }
  return taken;
}

std::vector<pending_requests::entry> pending_requests::take_all() {
  std::vector<entry> taken;
  for (auto& [_, w] : entries_)
    taken.push_back(std::move(w.what));
  entries_.clear();
  deadlines_.clear();
  return taken;
}

std::vector<pending_requests::entry> pending_requests::take_expired(clock::time_point now) {
  std::vector<entry> taken;
  while (!deadlines_.empty() && deadlines_.begin()->first <= now)
    taken.push_back(remove(entries_.find(deadlines_.begin()->second)));
  return taken;
}

std::optional<pending_requests::clock::time_point> pending_requests::earliest_deadline() const {
  if (deadlines_.empty())
    return std::nullopt;
  return deadlines_.begin()->first;
}

} // namespace troupe::detail
