#include "held_values.hpp"

#include "troupe/actors/error.hpp"

namespace troupe::detail {

namespace {

template <class Map, class Entry>
void add_once(Map& entries, const std::string& group, const std::string& key, Entry entry,
              const char* what, const char* taken) {
  if (!entries.try_emplace({group, key}, std::move(entry)).second)
    throw key_error(std::string{what} + " '" + key + "' already " + taken + " group '" + group +
                    "'");
}

template <class Map>
std::optional<typename Map::mapped_type> found(const Map& entries,
                                               const typename Map::key_type& at) {
  const auto entry = entries.find(at);
  if (entry == entries.end())
    return std::nullopt;
  return entry->second;
}

} // namespace

void held_values::add_paired(const std::string& group, const std::string& key, paired_value value) {
  std::lock_guard guard{mutex_};
  add_once(paired_, group, key, std::move(value), "paired value", "paired to");
}

void held_values::add_service(const std::string& group, const std::string& key,
                              chunk_invoker service) {
  std::lock_guard guard{mutex_};
  add_once(services_, group, key, std::move(service), "service", "registered on");
}

void held_values::remove(key_table table, const std::string& group, const std::string& key) {
  std::lock_guard guard{mutex_};
  if (table == key_table::paired)
    paired_.erase({group, key});
  else
    services_.erase({group, key});
}

std::optional<paired_value> held_values::paired(const std::string& group,
                                                const std::string& key) const {
  std::lock_guard guard{mutex_};
  return found(paired_, {group, key});
}

std::optional<chunk_invoker> held_values::service(const std::string& group,
                                                  const std::string& key) const {
  std::lock_guard guard{mutex_};
  return found(services_, {group, key});
}

bool held_values::holds(key_table table, const std::string& group, const std::string& key) const {
  std::lock_guard guard{mutex_};
  return table == key_table::paired ? paired_.contains({group, key})
                                    : services_.contains({group, key});
}

bool held_values::has_room_for(int owner) const {
  std::lock_guard guard{mutex_};
  const auto count = kept_by_owner_.find(owner);
  return count == kept_by_owner_.end() || count->second < max_kept_per_member;
}

std::string held_values::keep(int owner, bytes payload) {
  std::lock_guard guard{mutex_};
  auto id = std::to_string(next_kept_++);
  kept_.emplace(id, kept_value{owner, std::move(payload)});
  ++kept_by_owner_[owner];
  return id;
}

std::optional<bytes> held_values::kept(const std::string& id) const {
  std::lock_guard guard{mutex_};
  const auto at = kept_.find(id);
  if (at == kept_.end())
    return std::nullopt;
  return at->second.payload;
}

void held_values::release(const std::string& id) {
  std::lock_guard guard{mutex_};
  if (auto at = kept_.find(id); at != kept_.end()) {
    --kept_by_owner_[at->second.owner];
    kept_.erase(at);
  }
}

void held_values::forget_owner(int owner) {
  std::lock_guard guard{mutex_};
  std::erase_if(kept_, [owner](const auto& entry) { return entry.second.owner == owner; });
  kept_by_owner_.erase(owner);
}

} // namespace troupe::detail
