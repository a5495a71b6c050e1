// A watch on every key under a prefix: a thread of its own streams the changes from one of the
// cluster's servers and hands them over in order. When its server fails, falls silent for `idle`
// (a server cut off from the cluster's leader is told to end the stream, and a silent one is
// left), or ends the stream, it goes on from the next server after the last revision it saw, so
// no change is lost or seen twice. If the store has compacted away revisions it had not seen,
// it calls on_resync: the owner reads the prefix again.
#pragma once

#include "etcd_client.hpp"

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace troupe::detail::etcd {

struct change {
  bool deleted = false;
  key_value item; // a deleted key's value is empty
};

struct watch_handlers {
  /// Changes, in order; called on the watch's thread (what it throws is reported on stderr).
  std::function<void(const std::vector<change>&)> on_changes;
  /// Changes were lost to compaction; the watch goes on from the store's current revision.
  std::function<void()> on_resync;
};

class watch {
public:
  /// Watches `prefix` for changes after `after_revision` (the revision the owner read it at).
  watch(client_settings settings, std::string prefix, std::int64_t after_revision,
        watch_handlers handlers, std::chrono::milliseconds idle = std::chrono::seconds{5});
  /// Ends the stream and waits for the thread: no handler runs after it returns.
  ~watch();
  watch(const watch&) = delete;
  watch& operator=(const watch&) = delete;

  /// Streams opened so far (every server tried counts).
  std::uint64_t streams() const;

private:
  void run();
  bool take(const nlohmann::json& document);
  void pause(std::chrono::milliseconds how_long);

  client_settings settings_;
  std::string prefix_;
  std::int64_t seen_revision_;
  watch_handlers handlers_;
  std::chrono::milliseconds idle_;
  mutable std::mutex mutex_;
  std::condition_variable stopping_;
  bool stopped_ = false;
  connection* streaming_ = nullptr; // the connection run() streams on, for ~watch to cancel
  std::uint64_t streams_ = 0;
  std::thread thread_;
};

} // namespace troupe::detail::etcd
