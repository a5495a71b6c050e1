#include "lease_keeper.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "troupe/actors/detail/result_state.hpp"

namespace troupe::detail::etcd {

namespace {

/// A renewal may take a third of the TTL at most: however long the store's requests may take,
/// the keeper tries again in time and says within the TTL that the lease is gone.
client_settings renewing(client_settings settings, std::chrono::seconds ttl) {
  settings.request_timeout = std::min(
    settings.request_timeout, std::chrono::duration_cast<std::chrono::milliseconds>(ttl) / 3);
  return settings;
}

} // namespace

lease_keeper::lease_keeper(client_settings settings, std::chrono::seconds ttl,
                           std::function<void(std::string)> on_lost)
  : store_{renewing(std::move(settings), ttl)}, ttl_{ttl}, on_lost_{std::move(on_lost)},
    id_{store_.grant(ttl)} {
  thread_ = std::thread{[this] { run(); }};
}

lease_keeper::~lease_keeper() {
  {
    std::scoped_lock lock{mutex_};
    stopped_ = true;
  }
  stopping_.notify_all();
  thread_.join();
  if (lost())
    return;
  try {
    store_.revoke(id_);
  } catch (const troupe::error&) {
    // The store is out of reach: the lease expires within its TTL, and its keys with it.
  }
}

bool lease_keeper::lost() const {
  std::scoped_lock lock{mutex_};
  return lost_;
}

void lease_keeper::lose(std::string why) {
  {
    std::scoped_lock lock{mutex_};
    lost_ = true;
  }
  try {
    on_lost_(std::move(why));
  } catch (...) {
    report_escaped_exception("a store lease's loss handler");
  }
}

bool lease_keeper::renew(clock::time_point& renewed) {
  try {
    if (!store_.keep_alive(id_)) {
      lose("its lease in the world's store expired (it was not renewed within " + readable(ttl_) +
           ")");
      return false;
    }
    renewed = clock::now();
  } catch (const troupe::error& e) {
    if (clock::now() - renewed >= ttl_) {
      lose("the world's store did not renew its lease for " + readable(ttl_) + " (" + e.what() +
           ")");
      return false;
    }
  }
  return true;
}

void lease_keeper::run() {
  auto renewed = clock::now();
  // Every sixth of the TTL: a leader election in the store (a second or two without a leader,
  // with the test clusters' timeouts) leaves several tries before a whole TTL has passed.
  const auto period = std::chrono::duration_cast<std::chrono::milliseconds>(ttl_) / 6;
  for (;;) {
    {
      std::unique_lock lock{mutex_};
      if (stopping_.wait_for(lock, period, [this] { return stopped_; }))
        return;
    }
    if (!renew(renewed))
      return;
  }
}

} // namespace troupe::detail::etcd
