// The actors placed in a process pool's worker slots (process_pool::spawn with troupe::in_slot),
// shared by the pool and the actors' hosts: a host adds its actor's channel, the slot's
// worker_driver hands it to the slot's process (once, to one process), and the host learns
// which process took it, whose exit then means its actor is lost. An actor's channel is never
// handed to a second process: after a loss its host adds a new one.
#pragma once

#include "process/worker_wire.hpp"

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace troupe::detail {

class slot_placements {
public:
  /// Who hands new channels over: called with the slot of each one added.
  void on_added(std::function<void(std::size_t slot)> hand_over);
  /// Adds an actor's channel for slot `slot` and has it handed over; its id. Throws pool_closed
  /// once close() was called.
  std::uint64_t add(std::size_t slot, actor_channel channel);
  /// The channel goes (its actor stopped or was lost).
  void remove(std::uint64_t id) noexcept;
  /// The process the channel was handed to; 0 until it is.
  pid_t placed_in(std::uint64_t id) const;
  /// Whether slot `slot` has channels no process took yet (cheap: checked in every driver loop).
  bool pending(std::size_t slot) const noexcept;
  /// The channels of slot `slot` no process took yet, now taken by process `pid`.
  std::vector<actor_channel> take(std::size_t slot, pid_t pid);
  /// The pool is closing: no more actors are placed (`why` says so to those that try), and the
  /// pool is asked for nothing more.
  void close(std::string why);
  /// Why the pool closed (what close() was told), or empty while it runs.
  std::string closed_reason() const;

private:
  struct entry {
    std::size_t slot = 0;
    actor_channel channel;
    pid_t placed_in = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::uint64_t, entry> entries_;
  std::uint64_t next_id_ = 0;
  std::atomic<std::size_t> waiting_{0}; // entries no process took yet
  std::string closed_; // why, once closed
  // Its own lock, never held with mutex_: the hand-over takes the pool's lock.
  std::mutex hand_over_mutex_;
  std::function<void(std::size_t)> hand_over_;
};

} // namespace troupe::detail
