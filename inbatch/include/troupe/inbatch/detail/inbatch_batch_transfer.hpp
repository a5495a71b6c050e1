// How the batch of an inbatch_parallel call reaches the worker processes: encoded once per
// call into a shared-memory segment that every chunk names (the action keeps the segment for its
// next call, so its pages are mapped already), and decoded once per worker and call. A method
// that takes the batch by non-const reference runs each chunk on a fresh copy, so one chunk's
// changes never reach another; one taking `const Batch&` reads the decoded batch itself. A pool
// that takes nodes from other hosts cannot share memory with them: its chunks carry the batch.
#pragma once

#include "troupe/actors/error.hpp"
#include "troupe/actors/serialization.hpp"
#include "troupe/queues/shm_segment.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

namespace troupe::detail {

/// The batch as a chunk carries it: inline, or the name of the segment holding its encoding.
template <class Batch>
struct inbatch_batch {
  std::optional<Batch> inline_copy;
  std::string segment;
  std::uint64_t bytes = 0;
  std::uint64_t generation = 0; // which call's batch the segment holds

  template <class Archive>
  void serialize(Archive& ar) {
    ar(inline_copy, segment, bytes, generation);
  }

  /// The chunk's own copy of the batch (in the worker), for a method that may change it.
  Batch copy() const {
    if (inline_copy)
      return *inline_copy;
    return *decoded();
  }

  /// The batch for a method that only reads it: no copy per chunk.
  const Batch& read_only(std::shared_ptr<const Batch>& keep) const {
    if (inline_copy)
      return *inline_copy;
    keep = decoded();
    return *keep;
  }

private:
  /// The batch of the last call this worker read: workers run one chunk at a time, and a
  /// call's chunks name one segment, so one is all a worker needs to keep.
  std::shared_ptr<const Batch> decoded() const {
    static std::mutex lock;
    static std::string last_segment;
    static std::uint64_t last_generation = 0;
    static std::shared_ptr<const Batch> last;
    const std::lock_guard hold{lock};
    if (last_segment != segment || last_generation != generation) {
      const auto mapped = shm_segment::open(segment); // released again once decoded
      if (mapped.size() < bytes)
        throw serialization_error("inbatch batch segment " + segment + " holds " +
                                  std::to_string(mapped.size()) + " bytes, not " +
                                  std::to_string(bytes));
      last = std::make_shared<const Batch>(
        deserialize<Batch>(std::span<const std::byte>{mapped.data(), bytes}));
      last_segment = segment;
      last_generation = generation;
    }
    return last;
  }
};

/// The segments an action encodes its batches into, one kept between calls. Calls at once each
/// take their own; each call's batch gets a new generation, so no worker reads an old one.
class inbatch_segments {
public:
  /// A segment of at least `bytes` payload bytes: the kept one if it fits.
  shm_segment take(std::size_t bytes);
  /// Keeps `segment` for a later call (the larger, if one is kept already).
  void give_back(shm_segment segment);
  std::uint64_t next_generation() noexcept { return ++generation_; }

private:
  std::mutex lock_;
  std::optional<shm_segment> kept_;
  std::atomic<std::uint64_t> generation_{0};
};

/// The caller's side: the batch encoded into a segment for the call's length.
template <class Batch>
class shared_inbatch_batch {
public:
  /// `shareable`: the pool's workers all run on this host.
  shared_inbatch_batch(const Batch& batch, bool shareable, inbatch_segments& segments)
    : segments_(segments) {
    if (!shareable) {
      handle_.inline_copy = batch;
      return;
    }
    const auto encoded = serialize(batch);
    segment_.emplace(segments.take(encoded.size()));
    std::memcpy(segment_->data(), encoded.data(), encoded.size());
    handle_.segment = segment_->name();
    handle_.bytes = encoded.size();
    handle_.generation = segments.next_generation();
  }
  ~shared_inbatch_batch() {
    if (segment_)
      segments_.give_back(std::move(*segment_));
  }
  shared_inbatch_batch(const shared_inbatch_batch&) = delete;
  shared_inbatch_batch& operator=(const shared_inbatch_batch&) = delete;

  const inbatch_batch<Batch>& handle() const noexcept { return handle_; }

private:
  inbatch_segments& segments_;
  std::optional<shm_segment> segment_;
  inbatch_batch<Batch> handle_;
};

} // namespace troupe::detail
