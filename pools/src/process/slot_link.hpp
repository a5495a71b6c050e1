// An actor placed in the worker process of a pool's slot (process_pool::spawn with
// troupe::in_slot), seen from its host: a channel of its own (queues, heartbeat) that the slot's
// worker_driver hands to the slot's process, which serves it on a thread of its own. The actor
// is lost when that process exits (seen at once) or its thread's heart stops; the host then
// makes a new slot_link, which the slot's next process takes.
#pragma once

#include "process/slot_placements.hpp"
#include "process/worker_channel.hpp"

#include <memory>
#include <string>

namespace troupe::detail {

class slot_link final : public channel_link {
public:
  /// Places the actor made from `actor` (its type's context setup) in slot `slot`.
  /// pool_closed if the pool is closing.
  slot_link(std::size_t slot, std::shared_ptr<const process_settings> settings,
            std::shared_ptr<slot_placements> placements, context_setup actor, std::string label);
  /// Withdraws the placement and lets the actor's thread end; the slot's process goes on.
  ~slot_link() override;
  slot_link(const slot_link&) = delete;
  slot_link& operator=(const slot_link&) = delete;

  bool alive() override;
  /// Once the pool is closing or terminated: its processes end, and its actors with them.
  std::string ended_by_owner() const override;
  /// Ends the actor's thread (it takes no more calls); the process is the pool's and goes on.
  void kill() override;

private:
  /// Why the process the actor was placed in is gone, or empty while it runs (or before any
  /// process took it).
  std::string process_gone() const;

  std::shared_ptr<const process_settings> settings_;
  std::shared_ptr<slot_placements> placements_;
  std::uint64_t id_;
};

} // namespace troupe::detail
