#include "member_table.hpp"

#include <algorithm>
#include <mutex>

namespace troupe::detail {

member_table::member_table(int capacity)
  : names_(static_cast<std::size_t>(capacity)), devices_(names_.size()) {}

bool member_table::add(int rank, const std::string& name, std::vector<std::string> devices) {
  std::unique_lock guard{mutex_};
  if (rank < 0 || rank >= capacity() || name.empty())
    return false;
  auto& held = names_[static_cast<std::size_t>(rank)];
  if (!held.empty())
    return held == name;
  held = name;
  devices_[static_cast<std::size_t>(rank)] = std::move(devices);
  ranks_.emplace(name, rank);
  ++given_;
  return true;
}

void member_table::renew(int rank, std::vector<std::string> devices) {
  std::unique_lock guard{mutex_};
  if (rank >= 0 && rank < capacity())
    devices_[static_cast<std::size_t>(rank)] = std::move(devices);
}

void member_table::adopt(const std::vector<std::string>& names,
                         const std::vector<std::vector<std::string>>& devices) {
  for (std::size_t rank = 0; rank < names.size() && rank < devices.size(); ++rank)
    if (!names[rank].empty())
      (void)add(static_cast<int>(rank), names[rank], devices[rank]);
}

const std::string* member_table::name(int rank) const {
  std::shared_lock guard{mutex_};
  if (rank < 0 || rank >= capacity() || names_[static_cast<std::size_t>(rank)].empty())
    return nullptr;
  return &names_[static_cast<std::size_t>(rank)];
}

std::optional<int> member_table::rank_of(std::string_view name) const {
  std::shared_lock guard{mutex_};
  const auto at = ranks_.find(name);
  if (at == ranks_.end())
    return std::nullopt;
  return at->second;
}

std::vector<std::string> member_table::devices(int rank) const {
  std::shared_lock guard{mutex_};
  if (rank < 0 || rank >= capacity())
    return {};
  return devices_[static_cast<std::size_t>(rank)];
}

std::vector<std::string> member_table::names() const {
  std::shared_lock guard{mutex_};
  return names_;
}

int member_table::size() const {
  std::shared_lock guard{mutex_};
  return given_;
}

} // namespace troupe::detail
