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

template <class R>
class imap_stream {
public:
  imap_stream(std::shared_ptr<detail::imap_source<R>> source,
              std::shared_ptr<detail::pool_core> core)
    : source_(std::move(source)), core_(std::move(core)) {}

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

  class iterator {
  public:
    using iterator_category = std::input_iterator_tag;
    using value_type = R;
    using difference_type = std::ptrdiff_t;

    iterator() = default;
    explicit iterator(imap_stream* stream) : stream_(stream) { advance(); }

    R& operator*() const { return *stream_->current_; }
    R* operator->() const { return &*stream_->current_; }
    iterator& operator++() {
      advance();
      return *this;
    }
    void operator++(int) { advance(); }
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
