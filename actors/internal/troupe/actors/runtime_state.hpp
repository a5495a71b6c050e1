// What modules built on actors/ need from a runtime: its actor system, and a registry through
// which the runtime stops them before the actor system goes away. Not installed: it includes CAF.
#pragma once

#include "troupe/actors/detached_threads.hpp"
#include "troupe/actors/runtime.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace troupe {

namespace detail {

class tls_context;
class transport;

/// Something that runs actors on a runtime's system and must stop them before it is destroyed.
class service {
public:
  virtual ~service() = default;
  /// Stops the service's actors and releases its actor handles; the system is destroyed next.
  virtual void shutdown() noexcept = 0;
};

/// Services attached to a runtime. Shared with the services so that one outliving its runtime
/// can tell it has already been shut down.
class service_registry {
public:
  void add(service* s);
  /// Detaches `s`; false if the runtime has already shut it down.
  bool remove(service* s);
  /// Shuts every attached service down; later `add` calls throw state_error.
  void shutdown_all() noexcept;

private:
  std::mutex mutex_;
  bool shut_down_ = false;
  std::vector<service*> services_;
};

struct runtime_state {
  explicit runtime_state(int scheduler_threads);
  ~runtime_state();
  /// Stops the transport, then the actor system (the runtime's destructor, after its services).
  void stop() noexcept;

  int scheduler_threads;
  caf::actor_system_config config; // must outlive the system
  std::unique_ptr<caf::actor_system> system;
  std::shared_ptr<service_registry> services = std::make_shared<service_registry>();
  std::mutex tls_mutex;
  std::shared_ptr<const tls_context> tls; // set once, by the first TLS user (network.cpp)
  std::unique_ptr<detail::transport> network; // every connection to another process goes through it
  /// The threads of this runtime's detached actors, waited for before the system stops.
  std::shared_ptr<detached_threads> actor_threads = std::make_shared<detached_threads>();
};

} // namespace detail

detail::runtime_state& runtime_state_of(runtime& rt);

} // namespace troupe
