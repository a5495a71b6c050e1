#include "etcd_watch.hpp"

#include "etcd_codec.hpp"
#include "troupe/actors/detail/result_state.hpp"
#include "troupe/actors/error.hpp"

namespace troupe::detail::etcd {

watch::watch(client_settings settings, std::string prefix, std::int64_t after_revision,
             watch_handlers handlers, std::chrono::milliseconds idle)
  : settings_{std::move(settings)}, prefix_{std::move(prefix)}, seen_revision_{after_revision},
    handlers_{std::move(handlers)}, idle_{idle}, thread_{[this] { run(); }} {}

watch::~watch() {
  {
    std::scoped_lock lock{mutex_};
    stopped_ = true;
    if (streaming_ != nullptr)
      streaming_->cancel();
  }
  stopping_.notify_all();
  thread_.join();
}

std::uint64_t watch::streams() const {
  std::scoped_lock lock{mutex_};
  return streams_;
}

void watch::pause(std::chrono::milliseconds how_long) {
  std::unique_lock lock{mutex_};
  stopping_.wait_for(lock, how_long, [this] { return stopped_; });
}

// One stream a turn, each from the next server; a failure costs a short pause, so a cluster
// that is down is not asked in a tight loop.
void watch::run() {
  for (std::size_t server = 0;; server = (server + 1) % settings_.endpoints.size()) {
    connection stream{settings_.endpoints[server], settings_.tls, settings_.max_reply_bytes};
    {
      std::scoped_lock lock{mutex_};
      if (stopped_)
        return;
      streaming_ = &stream;
      ++streams_;
    }
    const nlohmann::json request{{"create_request",
                                  {{"key", base64(prefix_)},
                                   {"range_end", base64(prefix_end(prefix_))},
                                   {"start_revision", std::to_string(seen_revision_ + 1)}}}};
    bool failed = false;
    try {
      stream.stream("/v3/watch", request, clock::now() + settings_.request_timeout, idle_,
                    [this](const nlohmann::json& document) { return take(document); });
    } catch (const troupe::error&) {
      failed = true; // silent, unreachable or malformed: the next server
    }
    {
      std::scoped_lock lock{mutex_};
      streaming_ = nullptr;
    }
    if (failed)
      pause(std::chrono::milliseconds{100});
  }
}

// A document of the stream: the watch made, changes, or the watch ended by the server (after a
// compaction, or with no leader). False ends the stream.
bool watch::take(const nlohmann::json& document) {
  if (!document.is_object() || !document.contains("result"))
    throw network_error("etcd's watch sent a document without a result");
  const auto& result = document["result"];
  if (flag_field(result, "canceled")) {
    if (const auto compacted = number_field(result, "compact_revision"); compacted > 0) {
      seen_revision_ = compacted - 1;
      try {
        handlers_.on_resync();
      } catch (...) {
        report_escaped_exception("a store watch's resync handler");
      }
    }
    return false;
  }
  std::vector<change> changes;
  for (const auto& event : array_field(result, "events")) {
    if (!event.is_object() || !event.contains("kv"))
      throw network_error("etcd's watch sent an event without a key");
    const bool deleted = event.contains("type") && event["type"] == "DELETE";
    changes.push_back(
      {deleted,
       {bytes_field(event["kv"], "key"), bytes_field(event["kv"], "value"),
        number_field(event["kv"], "create_revision"), number_field(event["kv"], "mod_revision"),
        number_field(event["kv"], "lease")}});
  }
  if (!changes.empty()) {
    seen_revision_ = std::max(seen_revision_, changes.back().item.mod_revision);
    try {
      handlers_.on_changes(changes);
    } catch (...) {
      report_escaped_exception("a store watch's handler");
    }
  }
  return true;
}

} // namespace troupe::detail::etcd
