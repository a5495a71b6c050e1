// The job behind imap and imap_unordered: results are handed to one consumer as they arrive,
// and at most `window` chunks may start ahead of what the consumer has taken, so memory stays
// bounded however long the input (until the pool closes: then the rest runs unthrottled, so
// that close(); join() never waits on a consumer).
#pragma once

#include "troupe/pools/detail/job.hpp"
#include "troupe/pools/detail/map_jobs.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

namespace troupe::detail {

/// What an imap stream needs of its job, independent of the callable and input types.
template <class R>
class imap_source {
public:
  using deadline = std::optional<std::chrono::steady_clock::time_point>;
  virtual ~imap_source() = default;
  /// The next result; nullopt once all were taken. Rethrows the item's own exception (the stream
  /// goes on after it); throws timeout_error if none arrives before `until`.
  virtual std::optional<R> next(deadline until) = 0;
  /// Blocks until no chunk runs any more (after the dispatcher abandoned the rest).
  virtual void wait_ended() = 0;
};

/// The consumer side of a streaming job: results are published per chunk (by whatever runs the
/// chunk: a thread, or a worker process's reply) and taken in input or completion order.
template <class R, bool Ordered>
class streaming_job : public job, public imap_source<R> {
protected:
  struct outcome {
    std::optional<R> value;
    std::exception_ptr error;
  };

  streaming_job(chunking chunks, std::size_t window, std::function<void()> wake_dispatcher)
    : job(chunks.chunk_count()),
      chunks_(chunks),
      window_(window),
      wake_dispatcher_(std::move(wake_dispatcher)) {
    limit_starts(window_);
  }

  /// Hands the outcomes of items [first, first + size) to the consumer.
  void publish(std::size_t first, std::vector<outcome>& results) {
    {
      std::lock_guard guard{mutex_};
      if constexpr (Ordered) {
        // pending_[k] holds item taken_ + k; items arrive in any order, gaps stay empty.
        const auto offset = first - taken_;
        if (pending_.size() < offset + results.size())
          pending_.resize(offset + results.size());
        for (std::size_t k = 0; k < results.size(); ++k)
          pending_[offset + k] = std::move(results[k]);
      } else {
        for (auto& r : results)
          pending_.push_back(std::move(r));
      }
    }
    arrived_.notify_all();
  }

  const chunking chunks_;

public:
  void abandon(std::size_t first, std::size_t last, std::exception_ptr why) noexcept override {
    for (auto chunk = first; chunk < last; ++chunk) {
      std::vector<outcome> results(chunks_.end(chunk) - chunks_.begin(chunk));
      for (auto& r : results)
        r.error = why;
      publish(chunks_.begin(chunk), results);
    }
  }

  std::optional<R> next(typename imap_source<R>::deadline until) override {
    std::unique_lock lock{mutex_};
    if (taken_ == chunks_.size)
      return std::nullopt;
    const auto available = [&] {
      if constexpr (Ordered)
        return !pending_.empty() && pending_.front().has_value();
      else
        return !pending_.empty();
    };
    if (until) {
      if (!arrived_.wait_until(lock, *until, available))
        throw timeout_error("imap: no result within the timeout (item " +
                            std::to_string(taken_) + " of " + std::to_string(chunks_.size) +
                            ")");
    } else {
      arrived_.wait(lock, available);
    }
    outcome next_result = std::move(*pending_.front());
    pending_.pop_front();
    ++taken_;
    const bool wake = allow(taken_ / chunks_.chunk_size + window_);
    lock.unlock();
    if (wake)
      wake_dispatcher_();
    if (next_result.error)
      std::rethrow_exception(next_result.error);
    return std::move(next_result.value);
  }

  void wait_ended() override {
    std::unique_lock lock{mutex_};
    arrived_.wait(lock, [&] { return all_ended_; });
  }

private:
  void complete() noexcept override {
    {
      std::lock_guard guard{mutex_};
      all_ended_ = true;
    }
    arrived_.notify_all();
  }

  std::size_t window_;
  std::function<void()> wake_dispatcher_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::size_t taken_ = 0;
  bool all_ended_ = false;
  // Ordered: slots for items from taken_ on, empty until their result arrives.
  // Unordered: results in arrival order.
  std::deque<std::optional<outcome>> pending_;
};

/// imap and imap_unordered on a thread pool: each chunk runs in the worker's thread.
template <class R, class Items, class Call, bool Ordered>
class imap_job final : public streaming_job<R, Ordered> {
  using base = streaming_job<R, Ordered>;

public:
  imap_job(Items items, std::size_t chunk_size, std::size_t window, Call call,
           std::function<void()> wake_dispatcher)
    : base(chunking{items.size(), chunk_size}, window, std::move(wake_dispatcher)),
      items_(std::move(items)),
      call_(std::move(call)) {}

  void run(std::size_t chunk, const worker_env& env) noexcept override {
    const auto first = this->chunks_.begin(chunk);
    const auto last = this->chunks_.end(chunk);
    std::vector<typename base::outcome> results(last - first);
    for (auto i = first; i < last; ++i) {
      try {
        results[i - first].value.emplace(call_(env, items_[i]));
      } catch (...) {
        results[i - first].error = std::current_exception();
      }
    }
    this->publish(first, results);
  }

private:
  Items items_;
  Call call_;
};

} // namespace troupe::detail
