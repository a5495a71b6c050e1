// ordered_server: a versioned key-value store hosted on one member of an rpc group and reached by
// name from any member (machin's OrderedServerSimpleImpl / OrderedServerSimple).
//
//   troupe::ordered_server_host host{group, "store"};            // on one member; keep it alive
//   troupe::ordered_server store{group, "store"};                 // on any member
//   store.push("a", value, /*version*/ 2, /*prev_version*/ 1);    // true if 1 is the newest
//   auto [v, version] = *store.pull<my_type>("a");                // the newest; or pull("a", 2)
//
// push stores `value` under `version` for an unknown key whatever `prev_version` says; for a
// known key only when its newest stored version equals `prev_version` (a compare-and-set, so
// concurrent writers never lose an update unseen). `version` itself may be any number. After a
// push, the oldest versions are dropped until version_depth + 1 are left. pull gives the newest
// (value, version), or the one stored under `version`, or nothing. Values are anything
// troupe::serialize handles; a pull as another type throws serialization_error. A host that is
// gone fails calls with peer_lost.
#pragma once

#include "troupe/servers/detail/versioned_store.hpp"
#include "troupe/world/rpc_group.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace troupe {

/// The member that holds an ordered server's store (machin's OrderedServerSimple): versioned values
/// by key, kept on this member for the group.
class ordered_server_host {
public:
  /// Offers the store `name` to `group` from this member; key_error if the group has it.
  /// invalid_argument if version_depth < 0.
  ordered_server_host(rpc_group group, std::string name, int version_depth = 1);
  /// Withdraws the store from the group.
  ~ordered_server_host();
  ordered_server_host(const ordered_server_host&) = delete;
  ordered_server_host& operator=(const ordered_server_host&) = delete;

  /// The store's name in the group.
  const std::string& name() const noexcept { return name_; }

private:
  rpc_group group_;
  std::string name_;
};

/// A member's handle to an ordered server (machin's OrderedServerSimple): pushes versioned values
/// by key, and pulls them, the newest or a given version.
class ordered_server {
public:
  /// With `timeout`, each push and pull waits that long at most (timeout_error, as an RPC call
  /// with a timeout); without, as long as the server's member is in the world.
  ordered_server(rpc_group group, std::string name,
                 std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  /// Pushes `value` as `version` of `key`; with `prev_version`, only if the newest version is that
  /// one. Whether it was stored.
  template <class T>
  bool push(const std::string& key, const T& value, std::int64_t version,
            std::optional<std::int64_t> prev_version = std::nullopt) {
    return push_blob(key, detail::blob{serialize(value)}, version, prev_version);
  }

  /// The value of `key` at `version` (the newest if none) and its version; nothing if there is no
  /// such key or version.
  template <class T>
  std::optional<std::pair<T, std::int64_t>> pull(const std::string& key,
                                                 std::optional<std::int64_t> version = {}) {
    auto found = pull_blob(key, version);
    if (!found)
      return std::nullopt;
    return std::pair<T, std::int64_t>{deserialize<T>(found->first.bytes()), found->second};
  }

  /// The same on values already serialized (what the model servers use).
  bool push_blob(const std::string& key, detail::blob value, std::int64_t version,
                 std::optional<std::int64_t> prev_version);
  std::optional<std::pair<detail::blob, std::int64_t>>
  /// pull() on values already serialized.
  pull_blob(const std::string& key, std::optional<std::int64_t> version);
  /// The newest version of `key`, and its value only if that version is above `than` (so a
  /// reader that is up to date moves no value); nothing for an unknown key.
  std::optional<std::pair<std::optional<detail::blob>, std::int64_t>>
  pull_blob_newer(const std::string& key, std::int64_t than);

private:
  template <class R, class... A>
  R call(const std::string& service, A&&... args) {
    if (timeout_)
      return group_.registered_async<R>(service, *timeout_, std::forward<A>(args)...).get();
    return group_.registered_sync<R>(service, std::forward<A>(args)...);
  }

  rpc_group group_;
  std::string push_service_, pull_service_, pull_newer_service_;
  std::optional<std::chrono::milliseconds> timeout_;
};

} // namespace troupe
