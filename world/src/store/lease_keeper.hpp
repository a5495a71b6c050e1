// A member's lease in the world's store, kept alive by a thread of its own: renewed every sixth
// of its TTL (each try bounded by a third), so several renewals may fail before it expires. Its
// keys go with it. When the store says it has expired, or no server has renewed it for a whole TTL
// (this member is on the side of a partition without the cluster's quorum, or the cluster is down),
// on_lost runs once, on the keeper's thread: by then the others have lost this member, or will
// within the TTL.
#pragma once

#include "etcd_client.hpp"

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace troupe::detail::etcd {

class lease_keeper {
public:
  /// Grants a lease of `ttl` (throws as client::grant does) and starts renewing it, over a
  /// connection of its own (another thread's slow request never delays a renewal).
  lease_keeper(client_settings settings, std::chrono::seconds ttl,
               std::function<void(std::string)> on_lost);
  /// Stops renewing and revokes the lease (its keys go at once), unless it was lost.
  ~lease_keeper();
  lease_keeper(const lease_keeper&) = delete;
  lease_keeper& operator=(const lease_keeper&) = delete;

  std::int64_t id() const { return id_; }
  /// Whether on_lost has run.
  bool lost() const;

private:
  void run();
  /// True if the lease is still held after one renewal (or the keeper is stopping).
  bool renew(clock::time_point& renewed);
  void lose(std::string why);

  client store_;
  std::chrono::seconds ttl_;
  std::function<void(std::string)> on_lost_;
  std::int64_t id_;
  mutable std::mutex mutex_;
  std::condition_variable stopping_;
  bool stopped_ = false;
  bool lost_ = false;
  std::thread thread_;
};

} // namespace troupe::detail::etcd
