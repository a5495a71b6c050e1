// A lease: a run of consecutive chunks of one job, handed to one worker. The worker claims chunks
// from the front; the dispatcher may take unclaimed chunks back from the end (to give an idle
// worker work that a busy one has not started, or to abandon it on terminate). Both ends live in
// one atomic word, so each chunk is claimed or taken back exactly once, without a lock.
#pragma once

#include "troupe/pools/detail/job.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

namespace troupe::detail {

class lease {
public:
  static constexpr std::size_t max_chunks = std::size_t{1} << 31;

  /// Chunks [first, first + count) of `job`, each already run `attempts` times by workers that
  /// died holding it.
  lease(job_ptr job, std::size_t first, std::size_t count, std::size_t attempts = 0)
    : job_(std::move(job)), first_(first), granted_(count), attempts_(attempts),
      range_(pack(0, count)) {}

  const job_ptr& job() const noexcept { return job_; }
  std::size_t granted() const noexcept { return granted_; }
  std::size_t attempts() const noexcept { return attempts_; }

  /// Worker: claims the next chunk into `chunk`; false when none is left.
  bool claim(std::size_t& chunk) noexcept {
    auto word = range_.load(std::memory_order_relaxed);
    for (;;) {
      const auto [next, end] = unpack(word);
      if (next >= end)
        return false;
      if (range_.compare_exchange_weak(word, pack(next + 1, end), std::memory_order_acq_rel,
                                       std::memory_order_relaxed)) {
        chunk = first_ + next;
        return true;
      }
    }
  }

  /// How much of the unclaimed chunks take_back takes.
  enum class portion {
    all, // the worker is lost, or the pool is going away
    half, // rounded up: a thief takes even a lone chunk queued behind one that runs
    under_half, // rounded down: the owner is about to start, so a lone chunk stays its own
  };

  /// Dispatcher: takes back unclaimed chunks from the end, `share` of them, at most `limit`.
  /// Returns the chunk range [first, last) taken, empty if none.
  std::pair<std::size_t, std::size_t> take_back(portion share, std::size_t limit) noexcept {
    auto word = range_.load(std::memory_order_relaxed);
    for (;;) {
      const auto [next, end] = unpack(word);
      const auto count = std::min(limit, part(end - std::min(next, end), share));
      if (count == 0)
        return {0, 0};
      if (range_.compare_exchange_weak(word, pack(next, end - count), std::memory_order_acq_rel,
                                       std::memory_order_relaxed))
        return {first_ + end - count, first_ + end};
    }
  }

  /// How many chunks take_back(share, no limit) would take now.
  std::size_t takeable(portion share) const noexcept { return part(unclaimed(), share); }

  std::size_t unclaimed() const noexcept {
    const auto [next, end] = unpack(range_.load(std::memory_order_relaxed));
    return end - std::min(next, end);
  }

  /// Whether the worker has claimed any chunk of it yet.
  bool started() const noexcept { return unpack(range_.load(std::memory_order_relaxed)).first > 0; }

  /// Worker: every chunk of it is claimed and its last replies are in hand, about to be settled.
  /// Its slot takes its next lease now, so that a caller woken by those results and submitting
  /// at once finds the slot free (and its worker still warm), before the lease's done message
  /// has reached the dispatcher.
  void mark_finishing() noexcept { finishing_.store(true, std::memory_order_release); }
  bool finishing() const noexcept { return finishing_.load(std::memory_order_acquire); }

  /// Chunks the worker ran; written by the worker before it reports the lease done.
  std::size_t ran = 0;

private:
  static std::size_t part(std::size_t unclaimed, portion share) noexcept {
    switch (share) {
    case portion::all: return unclaimed;
    case portion::half: return (unclaimed + 1) / 2;
    case portion::under_half: return unclaimed / 2;
    }
    return 0;
  }
  static std::uint64_t pack(std::uint64_t next, std::uint64_t end) noexcept {
    return (next << 32) | end;
  }
  static std::pair<std::size_t, std::size_t> unpack(std::uint64_t word) noexcept {
    return {static_cast<std::size_t>(word >> 32), static_cast<std::size_t>(word & 0xffffffffu)};
  }

  job_ptr job_;
  std::size_t first_;
  std::size_t granted_;
  std::size_t attempts_;
  std::atomic<std::uint64_t> range_;
  std::atomic<bool> finishing_{false};
};

using lease_ptr = std::shared_ptr<lease>;

} // namespace troupe::detail
