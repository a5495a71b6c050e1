#include "troupe/actors/travelled_actors.hpp"

#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>

namespace troupe::detail {

namespace {

/// Numbers handed out, weakly: a number does not keep its actor alive.
class travelled_table {
public:
  static travelled_table& instance() {
    static travelled_table table;
    return table;
  }

  std::uint64_t number_of(const std::shared_ptr<actor_core>& core, const std::string& type) {
    std::lock_guard guard{mutex_};
    if (const auto at = numbers_.find(core.get()); at != numbers_.end()) {
      const auto known = entries_.find(at->second);
      if (known != entries_.end() && known->second.core.lock() == core)
        return at->second;
    }
    sweep();
    const auto number = ++last_;
    entries_.emplace(number, entry{core, type});
    numbers_[core.get()] = number;
    return number;
  }

  travelled_actor find(std::uint64_t number) {
    std::lock_guard guard{mutex_};
    const auto at = entries_.find(number);
    if (at == entries_.end())
      return {};
    return {at->second.core.lock(), at->second.type};
  }

private:
  struct entry {
    std::weak_ptr<actor_core> core;
    std::string type;
  };

  /// Under the lock: forgets actors that are gone, so the table holds only the living.
  void sweep() {
    for (auto at = entries_.begin(); at != entries_.end();) {
      if (at->second.core.expired()) {
        std::erase_if(numbers_, [&](const auto& pair) { return pair.second == at->first; });
        at = entries_.erase(at);
      } else {
        ++at;
      }
    }
  }

  std::mutex mutex_;
  std::map<std::uint64_t, entry> entries_;
  std::map<const actor_core*, std::uint64_t> numbers_;
  std::uint64_t last_ = 0;
};

std::atomic<actor_resolver> installed_relay_resolver{nullptr};
std::atomic<bool> travelled_once{false};

} // namespace

actor_address travelled_address(const std::shared_ptr<actor_core>& core, const std::string& type) {
  actor_address address;
  address.name = *core->name();
  address.type = type;
  address.process = static_cast<std::int32_t>(getpid());
  address.number = travelled_table::instance().number_of(core, type);
  travelled_once.store(true);
  return address;
}

travelled_actor find_travelled(std::uint64_t number) {
  return travelled_table::instance().find(number);
}

bool any_travelled() noexcept { return travelled_once.load(); }

void set_relay_resolver(actor_resolver resolver) noexcept {
  installed_relay_resolver.store(resolver);
}

std::shared_ptr<actor_core> resolve_travelled(const actor_address& address) {
  if (address.process == static_cast<std::int32_t>(getpid())) {
    auto found = find_travelled(address.number);
    if (!found.core)
      throw actor_stopped("actor '" + address.name + "' is gone: every handle to it in its " +
                          "own process was dropped");
    // The number came from another process: a handle of one type must never reach an actor of
    // another, whose object its calls would misread.
    if (found.type != address.type)
      throw serialization_error("a handle to actor number " + std::to_string(address.number) +
                                " claims type " + address.type + ", but that actor is a " +
                                found.type);
    return found.core;
  }
  auto* relay = installed_relay_resolver.load();
  if (relay == nullptr || address.process != static_cast<std::int32_t>(getppid()))
    throw serialization_error(
      "a handle to actor '" + address.name + "' arrived in a process that cannot reach it: an " +
      "actor outside a world is reached from its own process and the worker processes of that " +
      "process's pools (spawn it on a world member for a handle that travels anywhere)");
  return relay(address);
}

} // namespace troupe::detail
