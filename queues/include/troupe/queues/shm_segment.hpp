// Named blocks of shared memory that are freed when nobody holds them any more, even when the
// holders crash. The queues move large tensors through them; they are usable on their own.
//
//   auto segment = troupe::shm_segment::create(64 << 20);   // held by this process
//   std::memcpy(segment.data(), bytes, 64 << 20);
//   send(segment.name());                                    // any channel
//   // elsewhere:
//   auto same = troupe::shm_segment::open(name);             // also held by that process
//
// Every segment records who holds it: processes (by pid and start time, so a recycled pid does
// not count) and queues (a message in flight). A segment with no living holder is an orphan:
// collect_orphan_segments() unlinks orphans, and queues call it when unlinked, and when created
// or opened (at most once a second in a process); a segment whose creator died before it was
// finished is collected too. Dropping the last shm_segment object of a process releases that
// process's hold, and the last release unlinks the segment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace troupe {

namespace detail {
struct segment_mapping;
} // namespace detail

/// A segment of shared memory, freed once no process or queue holds it (its holders are recorded in
/// it, so one whose holder died is collected): what large tensors travel through.
class shm_segment {
public:
  /// A new segment of `bytes` payload bytes, held by this process.
  static shm_segment create(std::size_t bytes);

  /// Maps an existing segment and adds a hold for this process. Throws troupe::invalid_argument
  /// if it does not exist, serialization_error if it is not a troupe segment.
  static shm_segment open(const std::string& name);

  /// These, and everything below, throw troupe::state_error on a segment moved from.
  const std::string& name() const;
  /// Its payload.
  std::byte* data() const;
  /// Its payload bytes.
  std::size_t size() const;

  /// A second handle to the same mapping (no new hold).
  shm_segment share() const;

  /// Whether anyone but this process (another process, a queue) holds the segment.
  bool shared_with_others() const;

  // Handing a hold over to a queue and back, for a message in flight.

  /// Adds a hold in the name of queue instance `queue_id` (of shared-memory object `queue_name`).
  void hold_for_queue(const std::string& queue_name, std::uint64_t queue_id);
  /// Drops one hold of that queue (the message left it).
  void release_for_queue(const std::string& queue_name, std::uint64_t queue_id);

  // Metadata slots a user of the segment (shared_tensor) keeps in its header.
  /// The user header: bytes a user of the segment keeps there (shared_tensor its shape and type).
  std::byte* user_header() const;
  /// The user header size.
  static constexpr std::size_t user_header_bytes = 512;

private:
  explicit shm_segment(std::shared_ptr<detail::segment_mapping> mapping)
    : mapping_(std::move(mapping)) {}
  /// The mapping; state_error for a segment moved from.
  detail::segment_mapping& mapping() const;
  std::shared_ptr<detail::segment_mapping> mapping_;
};

/// Unlinks every troupe segment none of whose holders is alive; returns how many.
std::size_t collect_orphan_segments();

/// Whether a troupe shared-memory object of this name exists (segments and queues).
bool shm_object_exists(const std::string& name);

} // namespace troupe
