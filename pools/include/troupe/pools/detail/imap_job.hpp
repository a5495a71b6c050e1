// The machinery behind imap and imap_unordered. Results go to one consumer through a sink, in
// input order or as they come; the jobs that compute them publish into it. Two kinds of source
// feed a stream, both bounded to a window of items ahead of what the consumer has taken:
//   - eager_imap: one job over an input that can be read by index in place (an lvalue
//     random-access range, or a container handed over), throttled by the job's start limit;
//   - lazy_imap: any other input (an input range, a view, a generator), pulled on the
//     consumer's thread as it reads, each block handed to the workers as soon as it is read.
// Once the pool closes, an eager job runs unthrottled, so that close(); join() never waits on a
// consumer (lazy blocks have all been submitted whole).
#pragma once

#include "troupe/pools/detail/job.hpp"
#include "troupe/pools/detail/map_jobs.hpp"
#include "troupe/pools/detail/pool_core.hpp"
#include "troupe/pools/detail/progress_tracker.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace troupe::detail {

using stream_deadline = std::optional<std::chrono::steady_clock::time_point>;

/// Where a stream's results wait for its consumer: published by any thread, per run of items,
/// taken by one consumer in input order (Ordered) or in arrival order.
template <class R, bool Ordered>
class imap_sink {
public:
  using value_type = R;
  struct outcome {
    std::optional<R> value;
    std::exception_ptr error;
  };

  explicit imap_sink(progress_ptr progress = nullptr) : progress_(std::move(progress)) {}

  /// Items [first, first + results.size()) of the stream are done.
  void publish(std::size_t first, std::vector<outcome>& results) {
    if (progress_) {
      std::size_t failed = 0;
      for (const auto& r : results)
        failed += r.error ? 1 : 0;
      progress_->completed(results.size(), failed);
    }
    bool all_done = false;
    {
      std::lock_guard guard{mutex_};
      published_ += results.size();
      all_done = published_ == total_;
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
    changed_.notify_all();
    if (all_done && progress_)
      progress_->finish();
  }

  /// The stream has `total` items (known from the start, or once the input ran out).
  void set_total(std::size_t total) {
    bool all_done = false;
    {
      std::lock_guard guard{mutex_};
      total_ = total;
      all_done = published_ == total_;
    }
    changed_.notify_all();
    if (progress_) {
      progress_->set_total(total);
      if (all_done)
        progress_->finish();
    }
  }

  /// The next outcome; nullopt once every item was taken. Throws timeout_error if none comes
  /// before `until`.
  std::optional<outcome> take(stream_deadline until) {
    std::unique_lock lock{mutex_};
    const auto ready = [&] { return takeable(); };
    if (!until)
      changed_.wait(lock, ready);
    else if (!changed_.wait_until(lock, *until, ready))
      throw timeout_error("imap: no result within the timeout (item " + std::to_string(taken_) +
                          ")");
    if (taken_ == total_)
      return std::nullopt;
    outcome next = std::move(*pending_.front());
    pending_.pop_front();
    ++taken_;
    return next;
  }

  std::size_t taken() const {
    std::lock_guard guard{mutex_};
    return taken_;
  }

  /// Whether take() would return at once: a result is there, or every item was taken.
  bool ready() const {
    std::lock_guard guard{mutex_};
    return takeable();
  }

  // The jobs feeding the sink, counted so a dropped stream can wait until none runs.
  void job_started() {
    std::lock_guard guard{mutex_};
    ++running_;
  }
  void job_ended() {
    {
      std::lock_guard guard{mutex_};
      --running_;
    }
    changed_.notify_all();
  }
  void wait_jobs_ended() {
    std::unique_lock lock{mutex_};
    changed_.wait(lock, [&] { return running_ == 0; });
  }

private:
  /// A result is there to take, or every item was taken (mutex_ held).
  bool takeable() const {
    if (taken_ == total_)
      return true;
    if constexpr (Ordered)
      return !pending_.empty() && pending_.front().has_value();
    else
      return !pending_.empty();
  }

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  progress_ptr progress_;
  std::size_t taken_ = 0, published_ = 0;
  std::size_t total_ = job::unlimited;
  std::size_t running_ = 0;
  // Ordered: slots for items from taken_ on, empty until their result arrives.
  // Unordered: results in arrival order.
  std::deque<std::optional<outcome>> pending_;
};

/// A run of a stream's items, [offset, offset + size), chunked for the workers; whatever runs a
/// chunk (a thread, or a worker process's reply) publishes its outcomes to the stream's sink.
/// `Kind` is thread_job or process_job.
template <class R, bool Ordered, class Kind>
class streaming_job : public Kind {
protected:
  using sink_type = imap_sink<R, Ordered>;
  using outcome = typename sink_type::outcome;

  streaming_job(chunking chunks, std::size_t offset, std::shared_ptr<sink_type> sink)
    : Kind(chunks.chunk_count()), chunks_(chunks), offset_(offset), sink_(std::move(sink)) {
    sink_->job_started();
  }

  /// Hands the outcomes of the job's items [first, first + size) to the consumer.
  void publish(std::size_t first, std::vector<outcome>& results) {
    sink_->publish(offset_ + first, results);
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

private:
  void complete() noexcept override { sink_->job_ended(); }

  std::size_t offset_;
  std::shared_ptr<sink_type> sink_;
};

/// What an imap stream needs of its source, whatever feeds it.
template <class R>
class imap_source {
public:
  virtual ~imap_source() = default;
  /// The next result; nullopt once all were taken. Rethrows the item's own exception (the stream
  /// goes on after it); throws timeout_error if none arrives before `until`.
  virtual std::optional<R> next(stream_deadline until) = 0;
  /// The stream is dropped: what has not started is abandoned; returns once nothing runs.
  virtual void drop(pool_core& core) = 0;
};

template <class R>
R value_or_rethrow(auto&& outcome) {
  if (outcome.error)
    std::rethrow_exception(outcome.error);
  return std::move(*outcome.value);
}

/// One job over the whole input, at most `window` chunks started ahead of the consumer.
template <class R, bool Ordered>
class eager_imap final : public imap_source<R> {
public:
  using sink_type = imap_sink<R, Ordered>;

  /// `make(sink)` builds the job over the input (its chunking is `chunks`).
  template <class MakeJob>
  eager_imap(pool_core& core, chunking chunks, std::size_t window, progress_ptr progress,
             MakeJob&& make)
    : sink_(std::make_shared<sink_type>(std::move(progress))), chunks_(chunks), window_(window),
      core_(&core) {
    sink_->set_total(chunks.size);
    job_ = make(sink_);
    job_->limit_starts(window_);
    core.submit(job_);
  }

  std::optional<R> next(stream_deadline until) override {
    auto outcome = sink_->take(until);
    if (!outcome)
      return std::nullopt;
    if (job_->allow(sink_->taken() / chunks_.chunk_size + window_))
      core_->wake();
    return value_or_rethrow<R>(*outcome);
  }

  void drop(pool_core& core) override {
    core.cancel(job_);
    sink_->wait_jobs_ended();
  }

private:
  std::shared_ptr<sink_type> sink_;
  chunking chunks_;
  std::size_t window_;
  pool_core* core_; // outlives the stream: imap_stream holds it
  job_ptr job_;
};

/// Pulls the input on the consumer's thread as it reads, at most `window` items ahead of it, and
/// hands the workers each block as soon as it is read: a block is full at `block` items, or
/// goes early once its first chunk has waited `linger`, so a slow input's items start as they
/// come and a fast one's travel in blocks. Each block runs as a job of its own.
template <class R, bool Ordered, class Item>
class lazy_imap final : public imap_source<R> {
public:
  using sink_type = imap_sink<R, Ordered>;
  /// Appends input items to `out` until it holds `count`; false once the input has ended.
  using pull_fn = std::function<bool(std::vector<Item>& out, std::size_t count)>;
  /// A job over a block of items that are the stream's items from `offset` on.
  using block_fn = std::function<std::shared_ptr<job>(std::vector<Item> items, std::size_t offset,
                                                      std::shared_ptr<sink_type> sink)>;
  static constexpr std::chrono::microseconds linger{500};

  lazy_imap(pool_core& core, pull_fn pull, block_fn make_block, std::size_t chunk,
            std::size_t block, std::size_t window, progress_ptr progress)
    : sink_(std::make_shared<sink_type>(std::move(progress))), pull_(std::move(pull)),
      make_block_(std::move(make_block)), chunk_(chunk), block_(std::max(block, chunk)),
      window_(std::max(window, block_)), core_(&core) {
    pull_block(); // the workers start on the first block at once
  }

  std::optional<R> next(stream_deadline until) override {
    // One block for the result about to be taken, then more while none is there to take: the
    // consumer waits for no more input than its next result needs.
    pull_block();
    while (!sink_->ready() && pull_block()) {
    }
    auto outcome = sink_->take(until);
    if (!outcome)
      return std::nullopt;
    return value_or_rethrow<R>(*outcome);
  }

  void drop(pool_core& core) override {
    ended_ = true;
    for (auto& block : blocks_)
      if (auto running = block.lock())
        core.cancel(std::move(running));
    sink_->wait_jobs_ended();
  }

private:
  /// Reads a block and submits it; false when the input has ended or the window is full.
  bool pull_block() {
    const auto ahead = submitted_ - sink_->taken();
    if (ended_ || ahead + chunk_ > window_)
      return false;
    const auto most = std::min(block_, (window_ - ahead) / chunk_ * chunk_);
    std::vector<Item> items;
    const auto first = std::chrono::steady_clock::now();
    bool more = true;
    try {
      while (more && items.size() < most &&
             (items.empty() || std::chrono::steady_clock::now() - first < linger))
        more = pull_(items, items.size() + chunk_);
    } catch (...) {
      // The input itself failed: its error takes the next place in the stream, which ends.
      const auto place = submitted_ + items.size();
      std::vector<typename sink_type::outcome> failed(1);
      failed[0].error = std::current_exception();
      sink_->publish(place, failed);
      finish(place + 1, std::move(items));
      return false;
    }
    if (!more) {
      const auto total = submitted_ + items.size(); // before `items` is moved from
      finish(total, std::move(items));
      return false;
    }
    submit(std::move(items));
    return true;
  }

  void submit(std::vector<Item> items) {
    const auto offset = submitted_;
    submitted_ += items.size();
    auto block = make_block_(std::move(items), offset, sink_);
    std::erase_if(blocks_, [](const std::weak_ptr<job>& b) { return b.expired(); });
    blocks_.push_back(block);
    core_->submit(std::move(block));
  }

  /// The input has ended with `items`, the stream at `total` items.
  void finish(std::size_t total, std::vector<Item> items) {
    ended_ = true;
    if (!items.empty())
      submit(std::move(items));
    sink_->set_total(total);
  }

  std::shared_ptr<sink_type> sink_;
  pull_fn pull_;
  block_fn make_block_;
  std::size_t chunk_, block_, window_;
  pool_core* core_; // outlives the stream: imap_stream holds it
  std::size_t submitted_ = 0;
  bool ended_ = false;
  std::vector<std::weak_ptr<job>> blocks_;
};

/// Where a lazy stream's input comes from: the caller's range, read in place when it is an
/// lvalue (it must outlive the stream), or moved into the stream when it is an rvalue.
template <class Range>
class pulled_input {
  using stored =
    std::conditional_t<std::is_lvalue_reference_v<Range>, Range, std::remove_cvref_t<Range>>;

public:
  using item = range_value_t<Range>;
  explicit pulled_input(Range&& range) : range_(std::forward<Range>(range)) {}

  bool pull(std::vector<item>& out, std::size_t count) {
    if (!position_)
      position_.emplace(std::ranges::begin(range_));
    auto& it = *position_;
    for (; out.size() < count && it != std::ranges::end(range_); ++it)
      out.push_back(*it);
    return it != std::ranges::end(range_);
  }

private:
  stored range_;
  std::optional<std::ranges::iterator_t<std::remove_reference_t<stored>>> position_;
};

/// Inputs an eager stream can read by index in place: an lvalue random-access range (which must
/// outlive the stream, like a view), or a container handed over whole. Anything else (input
/// ranges, views, generators) is pulled lazily.
template <class Range>
concept indexable_input = std::ranges::random_access_range<Range> &&
  std::ranges::sized_range<Range> &&
  (std::is_lvalue_reference_v<Range> || !std::ranges::view<std::remove_cvref_t<Range>>);

/// imap and imap_unordered on a thread pool: each chunk runs in the worker's thread.
template <class R, class Items, class Call, bool Ordered>
class imap_job final : public streaming_job<R, Ordered, thread_job> {
  using base = streaming_job<R, Ordered, thread_job>;

public:
  imap_job(Items items, std::size_t chunk_size, std::size_t offset, Call call,
           std::shared_ptr<typename base::sink_type> sink)
    : base(chunking{items.size(), chunk_size}, offset, std::move(sink)), items_(std::move(items)),
      call_(std::move(call)) {}

  std::size_t run(std::size_t chunk, const worker_env& env) noexcept override {
    const auto first = this->chunks_.begin(chunk);
    const auto last = this->chunks_.end(chunk);
    std::vector<typename base::outcome> results(last - first);
    std::size_t failed = 0;
    for (auto i = first; i < last; ++i) {
      try {
        results[i - first].value.emplace(call_(env, items_[i]));
      } catch (...) {
        results[i - first].error = std::current_exception();
        ++failed;
      }
    }
    this->publish(first, results);
    return failed;
  }

private:
  Items items_;
  Call call_;
};

/// Starts a stream over `range`: eager when it can be indexed in place, else lazy. `make_job`
/// builds a job from (items, chunk size, offset, sink) for either; `workers` sizes the window.
template <class R, bool Ordered, class Range, class MakeJob>
std::shared_ptr<imap_source<R>>
start_imap(pool_core& core, Range&& range, std::optional<std::ptrdiff_t> chunksize,
           const progress& report, std::size_t workers, MakeJob make_job) {
  using sink_type = imap_sink<R, Ordered>;
  // Enough chunks in flight to keep every worker busy while the consumer catches up.
  const auto window = std::max<std::size_t>(64, 8 * workers);
  if constexpr (indexable_input<Range&&>) {
    auto items = [&] {
      if constexpr (std::is_lvalue_reference_v<Range>)
        return borrowed_items{std::ranges::begin(range), std::ranges::size(range)};
      else
        return owned_items{collect(std::forward<Range>(range))};
    }();
    const auto chunk_size = chunksize ? chunk_size_for(chunksize, items.size(), workers) : 1;
    const chunking chunks{items.size(), chunk_size};
    return std::make_shared<eager_imap<R, Ordered>>(
      core, chunks, window, track(report, chunks.size), [&](std::shared_ptr<sink_type> sink) {
        return make_job(std::move(items), chunk_size, std::size_t{0}, std::move(sink));
      });
  } else {
    using item = range_value_t<Range>;
    // The input's length is unknown: chunksize is taken as given (default 1).
    const auto chunk_size = chunksize ? chunk_size_for(chunksize, 1, workers) : 1;
    auto input = std::make_shared<pulled_input<Range>>(std::forward<Range>(range));
    return std::make_shared<lazy_imap<R, Ordered, item>>(
      core, [input](std::vector<item>& out, std::size_t count) { return input->pull(out, count); },
      [make_job, chunk_size](std::vector<item> block, std::size_t offset,
                             std::shared_ptr<sink_type> sink) -> std::shared_ptr<job> {
        return make_job(owned_items{std::move(block)}, chunk_size, offset, std::move(sink));
      },
      chunk_size, 16 * chunk_size, window * chunk_size, track(report, std::nullopt));
  }
}

} // namespace troupe::detail
