// The tensor store a queue makes active while it encodes or decodes a message: large tensors go
// to shared-memory segments that the message holds in the queue's name.
#pragma once

#include "troupe/actors/detail/tensor_store.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/queues/detail/byte_queue.hpp"
#include "troupe/queues/shm_segment.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace troupe::detail {

class segment_store final : public tensor_store {
public:
  explicit segment_store(byte_queue& queue) : queue_(queue) {}

  bool takes(std::size_t bytes) const override {
    return bytes > queue_.options().large_tensor_bytes;
  }

  /// Copy mode (put): the tensor's bytes, once, into a spare segment of the queue or a new one.
  std::string keep(const void* data, std::size_t bytes) override {
    auto spare = queue_.take_spare(bytes);
    auto segment = spare ? std::move(*spare) : queue_.new_segment(bytes);
    std::memcpy(segment.data(), data, bytes);
    (spare ? already_held_ : carried_).push_back(segment);
    return segment.name();
  }

  std::size_t kept_bytes(const std::string& handle) override { return mapped(handle).size(); }

  /// Copy mode (get): the bytes out; the segment then becomes a spare, or is released.
  void fetch(const std::string& handle, void* out, std::size_t bytes) override {
    auto segment = mapped(handle);
    if (segment.size() < bytes)
      throw serialization_error("segment " + handle + " holds " + std::to_string(segment.size()) +
                                " bytes, the message says " + std::to_string(bytes));
    advise_huge_pages(out, bytes);
    std::memcpy(out, segment.data(), bytes);
    if (!queue_.offer_spare(segment)) {
      segment.release_for_queue(queue_.object_name(), queue_.instance_id());
      queue_.forget(handle);
    }
  }

  segment_store* outgoing_segments() noexcept override { return this; }
  segment_store* incoming_segments() noexcept override { return this; }

  /// Shared mode (put): the message carries a reference to an existing segment.
  void carry(const shm_segment& segment) { carried_.push_back(segment.share()); }

  /// Shared mode (get): this process takes over the message's hold on a segment.
  shm_segment adopt(const std::string& handle) {
    shm_segment segment = [&] {
      try {
        return shm_segment::open(handle);
      } catch (const invalid_argument&) {
        throw serialization_error("the message refers to segment " + handle +
                                  ", which no longer exists");
      }
    }();
    segment.release_for_queue(queue_.object_name(), queue_.instance_id());
    return segment;
  }

  /// After encoding: hand every segment the message refers to over to the queue.
  void hold_for_queue() {
    for (auto& segment : carried_)
      segment.hold_for_queue(queue_.object_name(), queue_.instance_id());
  }

  /// The put did not happen: take the holds back.
  void release_for_queue() {
    for (auto* list : {&carried_, &already_held_})
      for (auto& segment : *list) {
        segment.release_for_queue(queue_.object_name(), queue_.instance_id());
        queue_.forget(segment.name());
      }
  }

private:
  /// A large destination is usually a fresh allocation the copy is about to fault in page by
  /// page (glibc maps every allocation above 32 MiB anew): advised to huge pages, the copy faults
  /// it in 2 MiB at a time. Measured here for 64 MiB: a copy into fresh memory 30 ms, advised
  /// 7 ms (into memory already faulted in: 6 ms); populating it first (MADV_POPULATE_WRITE)
  /// added 5.5 ms of zeroing the copy did not save. Only whole 2 MiB pages inside the range are
  /// advised.
  static void advise_huge_pages(void* out, std::size_t bytes) {
    constexpr std::uintptr_t huge = 2u << 20;
    if (bytes < 4 * huge)
      return;
    const auto first = (reinterpret_cast<std::uintptr_t>(out) + huge - 1) & ~(huge - 1);
    const auto last = (reinterpret_cast<std::uintptr_t>(out) + bytes) & ~(huge - 1);
    if (last > first)
      (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }

  /// This process's mapping of a segment a message refers to (cached by the queue).
  shm_segment mapped(const std::string& handle) {
    try {
      return queue_.segment(handle);
    } catch (const invalid_argument&) {
      throw serialization_error("the message refers to segment " + handle +
                                ", which no longer exists");
    }
  }

  byte_queue& queue_;
  std::vector<shm_segment> carried_; // to be held for the queue
  std::vector<shm_segment> already_held_; // spares: held for the queue already
};

/// For a two-queue conversation: tensors a message carries out go into `out`'s segments, tensors
/// a message brought in are fetched from `in`'s. Without `out`, what goes out stays inline.
class crossing_store final : public tensor_store {
public:
  crossing_store(segment_store& out, segment_store& in) : out_(&out), in_(in) {}
  explicit crossing_store(segment_store& in) : out_(nullptr), in_(in) {}
  bool takes(std::size_t bytes) const override { return out_ != nullptr && out_->takes(bytes); }
  std::string keep(const void* data, std::size_t bytes) override {
    return out_->keep(data, bytes); // only after takes() said yes
  }
  void fetch(const std::string& handle, void* out, std::size_t bytes) override {
    in_.fetch(handle, out, bytes);
  }
  std::size_t kept_bytes(const std::string& handle) override { return in_.kept_bytes(handle); }
  segment_store* outgoing_segments() noexcept override { return out_; }
  segment_store* incoming_segments() noexcept override { return &in_; }

private:
  segment_store* out_;
  segment_store& in_;
};

} // namespace troupe::detail
