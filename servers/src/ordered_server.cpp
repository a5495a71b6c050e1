#include "troupe/servers/ordered_server.hpp"

#include <algorithm>

namespace troupe {

namespace detail {

versioned_store::versioned_store(int version_depth)
  : kept_(static_cast<std::size_t>(version_depth) + 1) {}

bool versioned_store::push(const std::string& key, blob value, std::int64_t version,
                           std::optional<std::int64_t> prev_version) {
  std::lock_guard guard{mutex_};
  auto [at, unknown] = entries_.try_emplace(key);
  auto& stored = at->second;
  if (!unknown && (!prev_version || stored.back().first != *prev_version))
    return false;
  // A version stored again keeps its place among the others (machin's dict does).
  auto same = std::find_if(stored.begin(), stored.end(),
                           [&](const auto& entry) { return entry.first == version; });
  if (same != stored.end())
    same->second = std::move(value);
  else
    stored.emplace_back(version, std::move(value));
  while (stored.size() > kept_)
    stored.pop_front();
  return true;
}

std::optional<std::pair<blob, std::int64_t>>
versioned_store::pull(const std::string& key, std::optional<std::int64_t> version) const {
  std::lock_guard guard{mutex_};
  auto at = entries_.find(key);
  if (at == entries_.end())
    return std::nullopt;
  const auto& stored = at->second;
  if (!version)
    return std::pair{stored.back().second, stored.back().first};
  auto same = std::find_if(stored.begin(), stored.end(),
                           [&](const auto& entry) { return entry.first == *version; });
  if (same == stored.end())
    return std::nullopt;
  return std::pair{same->second, same->first};
}

std::optional<std::pair<std::optional<blob>, std::int64_t>>
versioned_store::pull_newer(const std::string& key, std::int64_t than) const {
  std::lock_guard guard{mutex_};
  auto at = entries_.find(key);
  if (at == entries_.end())
    return std::nullopt;
  const auto& [newest, value] = at->second.back();
  if (newest > than)
    return std::pair{std::optional<blob>{value}, newest};
  return std::pair{std::optional<blob>{}, newest};
}

} // namespace detail

namespace {

std::string push_service(const std::string& name) { return name + "/_push_service"; }
std::string pull_service(const std::string& name) { return name + "/_pull_service"; }
std::string pull_newer_service(const std::string& name) { return name + "/_pull_newer_service"; }

} // namespace

ordered_server_host::ordered_server_host(rpc_group group, std::string name, int version_depth)
  : group_(std::move(group)), name_(std::move(name)) {
  if (version_depth < 0)
    throw invalid_argument("ordered server '" + name_ +
                           "': version_depth must be at least 0, got " +
                           std::to_string(version_depth));
  auto store = std::make_shared<detail::versioned_store>(version_depth);
  group_.register_service(push_service(name_),
                          [store](std::string key, detail::blob value, std::int64_t version,
                                  std::optional<std::int64_t> prev_version) {
                            return store->push(key, std::move(value), version, prev_version);
                          });
  try {
    group_.register_service(pull_service(name_),
                            [store](std::string key, std::optional<std::int64_t> version) {
                              return store->pull(key, version);
                            });
    group_.register_service(pull_newer_service(name_), [store](std::string key, std::int64_t than) {
      return store->pull_newer(key, than);
    });
  } catch (...) {
    for (const auto& service : {push_service(name_), pull_service(name_)})
      if (group_.is_registered(service))
        group_.deregister(service);
    throw;
  }
}

ordered_server_host::~ordered_server_host() {
  for (const auto& service :
       {push_service(name_), pull_service(name_), pull_newer_service(name_)}) {
    try {
      group_.deregister(service);
    } catch (const troupe::error&) {
      // The group or its world has stopped first: the services went with it.
    }
  }
}

ordered_server::ordered_server(rpc_group group, std::string name,
                               std::optional<std::chrono::milliseconds> timeout)
  : group_(std::move(group)), push_service_(push_service(name)), pull_service_(pull_service(name)),
    pull_newer_service_(pull_newer_service(name)), timeout_(timeout) {
  if (timeout_ && timeout_->count() <= 0)
    throw invalid_argument("ordered_server '" + name + "': a timeout must be positive");
}

bool ordered_server::push_blob(const std::string& key, detail::blob value, std::int64_t version,
                               std::optional<std::int64_t> prev_version) {
  return call<bool>(push_service_, key, std::move(value), version, prev_version);
}

std::optional<std::pair<detail::blob, std::int64_t>>
ordered_server::pull_blob(const std::string& key, std::optional<std::int64_t> version) {
  return call<std::optional<std::pair<detail::blob, std::int64_t>>>(pull_service_, key, version);
}

std::optional<std::pair<std::optional<detail::blob>, std::int64_t>>
ordered_server::pull_blob_newer(const std::string& key, std::int64_t than) {
  return call<std::optional<std::pair<std::optional<detail::blob>, std::int64_t>>>(
    pull_newer_service_, key, than);
}

} // namespace troupe
