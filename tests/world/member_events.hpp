// What a world's callbacks told a member: joins ("+name"), losses ("-name") and its own rejoins
// ("rejoined"), for a test to wait on.
#pragma once

#include "troupe/world/world.hpp"

#include <chrono>
#include <condition_variable>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace troupe::testing {

class member_events {
public:
  explicit member_events(troupe::world& world) {
    // The callbacks keep the record alive: the world may outlive this object (its callbacks
    // run until it has stopped).
    world.on_member_lost([seen = seen_](const std::string& name, int) { seen->add("-" + name); });
    world.on_member_joined([seen = seen_](const std::string& name, int) { seen->add("+" + name); });
    world.on_rejoined([seen = seen_] { seen->add("rejoined"); });
  }

  /// Whether `event` came ("-0": member "0" lost, "+0": joined), waiting up to `limit`.
  bool wait_for(const std::string& event,
                std::chrono::milliseconds limit = std::chrono::seconds{15}) {
    return wait_for_all({event}, limit);
  }
  /// Whether every one of `events` came, waiting up to `limit`.
  bool wait_for_all(std::initializer_list<std::string> events, std::chrono::milliseconds limit) {
    std::unique_lock lock{seen_->mutex};
    return seen_->changed.wait_for(lock, limit, [&] {
      for (const auto& event : events)
        if (!seen_->events.contains(event))
          return false;
      return true;
    });
  }

private:
  struct record {
    void add(const std::string& event) {
      std::scoped_lock lock{mutex};
      events.insert(event);
      changed.notify_all();
    }
    std::mutex mutex;
    std::condition_variable changed;
    std::set<std::string> events;
  };
  std::shared_ptr<record> seen_ = std::make_shared<record>();
};

} // namespace troupe::testing
