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

class slot_link final : public worker_link {
public:
  /// Places the actor made from `actor` (its type's context setup) in slot `slot`.
  /// pool_closed if the pool is closing.
  slot_link(std::size_t slot, std::shared_ptr<const process_settings> settings,
            std::shared_ptr<slot_placements> placements, context_setup actor, std::string label);
  /// Withdraws the placement and lets the actor's thread end; the slot's process goes on.
  ~slot_link() override;
  slot_link(const slot_link&) = delete;
  slot_link& operator=(const slot_link&) = delete;

  bool send(const request_batch& requests) override;
  std::optional<reply_batch> receive(std::chrono::milliseconds wait) override;
  bool alive() override;
  std::string lost_reason() const override { return lost_reason_; }
  /// Ends the actor's thread (it takes no more calls); the process is the pool's and goes on.
  void kill() override;
  const std::string& label() const noexcept override { return label_; }
  std::optional<segment_store> request_segments() override { return channel_.request_segments(); }
  std::optional<segment_store> reply_segments() override { return channel_.reply_segments(); }
  std::shared_ptr<queue<reply_batch>> relay_answers() override { return channel_.relay_answers(); }
  void spin_while_receiving(bool on) noexcept { channel_.spin_while_receiving(on); }

private:
  bool lost(std::string why);
  /// Why the process the actor was placed in is gone, or empty while it runs (or before any
  /// process took it).
  std::string process_gone() const;

  std::shared_ptr<const process_settings> settings_;
  std::shared_ptr<slot_placements> placements_;
  worker_channel channel_;
  std::uint64_t id_;
  std::string label_;
  std::string lost_reason_;
};

} // namespace troupe::detail
