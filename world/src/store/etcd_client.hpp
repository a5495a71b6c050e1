// A client of an etcd cluster (v3 API through its JSON gateway): the few operations a world's
// tables need, each bounded by a deadline, trying the cluster's servers in turn when one does
// not answer. Thread-safe: requests from several threads go one at a time over one connection.
#pragma once

#include "etcd_connection.hpp"
#include "troupe/actors/error.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace troupe::detail::etcd {

/// What a server said no to (an etcd error that another server would repeat): its gRPC code.
class refusal : public network_error {
public:
  refusal(std::int64_t code, const std::string& message) : network_error{message}, code_{code} {}
  std::int64_t code() const { return code_; }

private:
  std::int64_t code_;
};

struct key_value {
  std::string key;
  std::string value;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  std::int64_t lease = 0;
};

/// Keys of a range, and the store's revision they were read at.
struct range_read {
  std::vector<key_value> items;
  std::int64_t revision = 0;
};

struct client_settings {
  std::vector<store_endpoint> endpoints;
  /// Null: plain HTTP.
  std::shared_ptr<boost::asio::ssl::context> tls;
  /// The most one request may take, over every server it tries.
  std::chrono::milliseconds request_timeout{2'000};
  /// The largest reply (or streamed document) taken from a server.
  std::size_t max_reply_bytes = std::size_t{4} << 20;
};

class client {
public:
  explicit client(client_settings settings);

  /// Sets `key` to `value`, bound to `lease` (0: none); the store's revision after it.
  std::int64_t put(const std::string& key, const std::string& value, std::int64_t lease = 0);
  /// Sets `key` only if it does not exist; true if it was set here.
  bool create(const std::string& key, const std::string& value, std::int64_t lease = 0);
  /// Sets every key of `items` (key, value) at once, only if none of them exists: the store's
  /// revision they were made at (their create_revision), or 0 if they were not made here.
  std::int64_t create_all(const std::vector<std::pair<std::string, std::string>>& items,
                          std::int64_t lease = 0);
  /// `key` now, or as it was at store revision `at_revision` (refusal if compacted away).
  std::optional<key_value> get(const std::string& key, std::int64_t at_revision = 0);
  /// Every key starting with `prefix`, in key order; throws capacity_error naming the prefix if
  /// there are more than `limit`.
  range_read prefix(const std::string& prefix, std::int64_t limit);
  /// Deletes `key`; true if it existed.
  bool erase(const std::string& key);

  /// A new lease of `ttl`; its id.
  std::int64_t grant(std::chrono::seconds ttl);
  /// Renews `lease`: its TTL now, or nullopt if it has expired (or never was).
  std::optional<std::chrono::seconds> keep_alive(std::int64_t lease);
  /// Ends `lease` and deletes its keys (nothing if it has expired).
  void revoke(std::int64_t lease);

  /// Requests sent since the client was made (every try counts).
  std::uint64_t requests() const;
  const client_settings& settings() const { return settings_; }

private:
  nlohmann::json call(std::string_view path, const nlohmann::json& body);
  nlohmann::json try_servers(std::string_view path, const nlohmann::json& body,
                             clock::time_point deadline);

  client_settings settings_;
  mutable std::mutex mutex_;
  std::unique_ptr<connection> connection_; // to settings_.endpoints[current_]
  std::size_t current_ = 0;
  std::uint64_t requests_ = 0;
};

} // namespace troupe::detail::etcd
