// imap_stream<R>: the results of imap (input order) or imap_unordered (completion order),
// consumed as they arrive.
//
//   for (int y : pool.imap_unordered(square, xs)) std::cout << y << '\n';
//
//   auto stream = pool.imap(square, xs);
//   while (auto y = stream.next(std::chrono::milliseconds{100})) use(*y);  // or timeout_error
//
// An item whose task threw rethrows that exception when it is reached; the stream then goes on
// with the next item. Destroying a stream early cancels the items that have not started yet.
// The input is read as the stream goes, never more than a window of items ahead of the consumer:
// an input range, a view or a generator is pulled on the consumer's thread as it reads (so an
// endless one is fine), and an lvalue input range is read in place and must outlive the stream
// (like a view). Items pulled after the pool was closed fail with troupe::pool_closed. A stream
// moved from throws troupe::state_error when read.
#pragma once

#include "troupe/pools/detail/imap_job.hpp"
#include "troupe/pools/detail/pool_core.hpp"

#include <chrono>
#include <iterator>
#include <memory>
#include <optional>

namespace troupe {

/// The results of imap and imap_unordered, handed over as the consumer reads them: iterate it, or
/// call next(). At most a window of chunks runs ahead of the consumer; dropping the stream cancels
/// what has not started.
template <class R>
class imap_stream {
public:
  /// Made by a pool's imap and imap_unordered.
  imap_stream(std::shared_ptr<detail::imap_source<R>> source,
              std::shared_ptr<detail::pool_core> core)
    : source_(std::move(source)), core_(std::move(core)) {}

  /// Takes over `other`'s stream.
  imap_stream(imap_stream&&) noexcept = default;
  imap_stream& operator=(imap_stream&&) = delete;
  ~imap_stream() {
    if (source_)
      source_->drop(*core_);
  }

  /// The next result, or nullopt when the stream is exhausted.
  std::optional<R> next() { return source().next(std::nullopt); }

  /// As next(), but throws troupe::timeout_error if no result arrives within `timeout`; the
  /// stream stays usable.
  template <class Rep, class Period>
  std::optional<R> next(std::chrono::duration<Rep, Period> timeout) {
    return source().next(std::chrono::steady_clock::now() +
                         std::chrono::ceil<std::chrono::steady_clock::duration>(timeout));
  }

  /// An input iterator over the results; the stream's end is std::default_sentinel.
  class iterator {
  public:
    /// An input iterator.
    using iterator_category = std::input_iterator_tag;
    /// A result.
    using value_type = R;
    /// The distance between two iterators.
    using difference_type = std::ptrdiff_t;

    iterator() = default;
    /// At the stream's next result.
    explicit iterator(imap_stream* stream) : stream_(stream) { advance(); }

    /// The result it is at.
    R& operator*() const { return *stream_->current_; }
    /// The result it is at.
    R* operator->() const { return &*stream_->current_; }
    /// To the next result (waiting for it).
    iterator& operator++() {
      advance();
      return *this;
    }
    /// To the next result (waiting for it).
    void operator++(int) { advance(); }
    /// Whether the stream has no more results.
    friend bool operator==(const iterator& it, std::default_sentinel_t) {
      return it.stream_ == nullptr;
    }

  private:
    void advance() {
      stream_->current_ = stream_->next();
      if (!stream_->current_)
        stream_ = nullptr;
    }
    imap_stream* stream_ = nullptr;
  };

  /// Starts (or resumes) iteration; a task's exception escapes from begin() or operator++.
  iterator begin() { return iterator{this}; }
  /// The end of the results.
  std::default_sentinel_t end() const noexcept { return {}; }

private:
  /// The results' source; state_error for a stream moved from.
  detail::imap_source<R>& source() {
    if (!source_)
      detail::throw_empty_handle("troupe::imap_stream", "reading");
    return *source_;
  }

  std::shared_ptr<detail::imap_source<R>> source_;
  std::shared_ptr<detail::pool_core> core_;
  std::optional<R> current_;
};

} // namespace troupe
