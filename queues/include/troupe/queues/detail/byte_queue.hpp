// The shared-memory ring under troupe::queue<T>: byte messages, many senders, many receivers,
// safe when a process dies anywhere inside it.
#pragma once

#include "troupe/queues/detail/futex.hpp" // deadline: what the ring's waits take
#include "troupe/queues/queue_options.hpp"
#include "troupe/queues/shm_segment.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace troupe::detail {

class byte_queue {
public:
  enum class mode { create, open, open_or_create };

  /// Creates and/or opens queue `name` carrying values of the type tagged `type_tag` (named
  /// `type_name` in errors). Throws invalid_argument for a bad name, for creating an existing
  /// queue or opening a missing one, and serialization_error for a type mismatch.
  byte_queue(const std::string& name, mode how, const queue_options& options,
             std::uint64_t type_tag, const std::string& type_name);
  ~byte_queue();
  byte_queue(const byte_queue&) = delete;
  byte_queue& operator=(const byte_queue&) = delete;

  /// Appends one message; false if `until` passed first, or if `keep_waiting` (when given,
  /// asked every 20 ms while the queue is full or locked) said to stop. Throws queue_closed, and
  /// capacity_error for a message over max_message_bytes or than shared memory can hold.
  bool put(std::span<const std::byte> message, deadline until,
           const std::function<bool()>& keep_waiting = {});

  /// Takes the oldest message; nullopt if `until` passed first. Throws queue_closed once the
  /// queue is closed and drained.
  std::optional<std::vector<std::byte>> get(deadline until);

  /// Whether this handle's waits watch the queue before sleeping (see queue::spin_while_waiting).
  void spin_while_waiting(bool on) noexcept;

  void close();
  bool closed() const;
  std::size_t size() const;
  /// Removes the queue's name; processes that have it open keep using it.
  void unlink();

  // Segments for copy mode, recycled through the queue's spares and mapped once per process.

  /// A new segment of `bytes`, mapped and cached here.
  shm_segment new_segment(std::size_t bytes);
  /// A spare segment of at least `bytes` (not much more), taken from the queue; it keeps the
  /// queue's hold, which becomes the message's. nullopt if none fits.
  std::optional<shm_segment> take_spare(std::size_t bytes);
  /// This process's mapping of segment `name` (opened and cached on first use).
  shm_segment segment(const std::string& name);
  /// Gives a received segment (still held for the queue) to the spares; false if they are full,
  /// in which case the caller releases it.
  bool offer_spare(const shm_segment& segment);
  /// Drops this process's cached mapping of `name`.
  void forget(const std::string& name);

  const std::string& name() const noexcept;
  /// The shared-memory object's name, under which segments are held for this queue.
  const std::string& object_name() const noexcept;
  std::uint64_t instance_id() const noexcept;
  const queue_options& options() const noexcept;

private:
  struct state;
  std::unique_ptr<state> state_;
};

inline constexpr std::size_t max_queue_name_length = 200;

/// Throws troupe::invalid_argument unless `name` is 1-200 of [A-Za-z0-9._-].
void validate_queue_name(const std::string& name);

} // namespace troupe::detail
