// Jobs whose result is one value: apply (one call) and map/starmap (one call per item, results in
// input order).
#pragma once

#include "troupe/actors/async_result.hpp"
#include "troupe/pools/detail/job.hpp"
#include "troupe/pools/detail/progress_tracker.hpp"

#include <algorithm>
#include <mutex>
#include <optional>
#include <ranges>
#include <type_traits>
#include <vector>

namespace troupe::detail {

/// Chunks of `size` items, each `chunk_size` long but the last.
struct chunking {
  std::size_t size = 0;
  std::size_t chunk_size = 1;

  std::size_t chunk_count() const noexcept { return (size + chunk_size - 1) / chunk_size; }
  std::size_t begin(std::size_t chunk) const noexcept { return chunk * chunk_size; }
  std::size_t end(std::size_t chunk) const noexcept {
    return std::min(size, (chunk + 1) * chunk_size);
  }
};

/// The failure with the lowest item index: what map() rethrows, whatever order chunks ran in.
class first_failure {
public:
  void record(std::size_t index, std::exception_ptr error) noexcept {
    std::lock_guard guard{mutex_};
    if (!error_ || index < index_) {
      index_ = index;
      error_ = std::move(error);
    }
  }
  /// Only once all chunks have ended.
  const std::exception_ptr& error() const noexcept { return error_; }

private:
  std::mutex mutex_;
  std::size_t index_ = 0;
  std::exception_ptr error_;
};

/// Results written concurrently at distinct indices. Plain vector<R> where that is safe and
/// cheap; optional slots for types without a default constructor and for bool (vector<bool>
/// packs bits, so writes to neighbours would race).
template <class R>
class indexed_results {
  static constexpr bool direct =
    std::is_default_constructible_v<R> && std::is_move_assignable_v<R> && !std::is_same_v<R, bool>;
  using slot = std::conditional_t<direct, R, std::optional<R>>;

public:
  explicit indexed_results(std::size_t size) : slots_(size) {}

  template <class V>
  void set(std::size_t i, V&& value) {
    slots_[i] = std::forward<V>(value);
  }

  std::vector<R> take() && {
    if constexpr (direct) {
      return std::move(slots_);
    } else {
      std::vector<R> out;
      out.reserve(slots_.size());
      for (auto& s : slots_)
        out.push_back(std::move(*s));
      return out;
    }
  }

private:
  std::vector<slot> slots_;
};

/// What a map job gathers, wherever its chunks run: each item's result by index, and the
/// failure of the lowest index; then it fulfils the caller's result.
template <class R>
class map_results {
public:
  using value = std::conditional_t<std::is_void_v<R>, void, std::vector<R>>;

  map_results(std::size_t size, std::shared_ptr<result_state<value>> result,
              progress_ptr progress = nullptr)
    : output_(make_output(size)), result_(std::move(result)), progress_(std::move(progress)) {}

  template <class V>
  void set(std::size_t i, V&& v) {
    if constexpr (!std::is_void_v<R>)
      output_.set(i, std::forward<V>(v));
  }
  void fail(std::size_t i, std::exception_ptr error) noexcept {
    failure_.record(i, std::move(error));
  }

  /// A chunk of `items` items has ended, `failed` of them in failure.
  void chunk_ended(std::size_t items, std::size_t failed) noexcept {
    if (progress_)
      progress_->completed(items, failed);
  }

  /// Chunks [first, last) of `chunks` end unrun, their items failed with `why`.
  void abandon(const chunking& chunks, std::size_t first, std::size_t last,
               std::exception_ptr why) noexcept {
    if (first >= last)
      return;
    fail(chunks.begin(first), std::move(why));
    const auto items = chunks.end(last - 1) - chunks.begin(first);
    chunk_ended(items, items);
  }

  /// After every chunk has ended.
  void deliver() noexcept {
    if (progress_)
      progress_->finish();
    if (failure_.error())
      result_->set_error(failure_.error());
    else if constexpr (std::is_void_v<R>)
      result_->set_value({});
    else
      result_->set_value(std::move(output_).take());
  }

private:
  using output = std::conditional_t<std::is_void_v<R>, std::monostate, indexed_results<R>>;
  static output make_output(std::size_t size) {
    if constexpr (std::is_void_v<R>)
      return {};
    else
      return output(size);
  }

  output output_;
  first_failure failure_;
  std::shared_ptr<result_state<value>> result_;
  progress_ptr progress_;
};

/// Items read in place from a random-access range that outlives the job.
template <class It>
class borrowed_items {
public:
  borrowed_items(It first, std::size_t size) : first_(first), size_(size) {}
  std::size_t size() const noexcept { return size_; }
  decltype(auto) operator[](std::size_t i) const { return first_[static_cast<std::ptrdiff_t>(i)]; }

private:
  It first_;
  std::size_t size_;
};

/// Items the job owns (copied or moved from the caller's range).
template <class T>
class owned_items {
public:
  explicit owned_items(std::vector<T> items) : items_(std::move(items)) {}
  std::size_t size() const noexcept { return items_.size(); }
  T& operator[](std::size_t i) { return items_[i]; }
  const T& operator[](std::size_t i) const { return items_[i]; }

private:
  std::vector<T> items_;
};

template <class Range>
using range_value_t = std::ranges::range_value_t<std::remove_cvref_t<Range>>;

/// Ranges a blocking call may read in place, by index, from its workers.
template <class Range>
concept borrowable_range =
  std::ranges::random_access_range<Range> && std::ranges::sized_range<Range>;

/// Copies (or moves, for an rvalue range) a range's items into a vector.
template <class Range>
std::vector<range_value_t<Range>> collect(Range&& range) {
  std::vector<range_value_t<Range>> out;
  if constexpr (std::ranges::sized_range<Range>)
    out.reserve(std::ranges::size(range));
  if constexpr (std::is_rvalue_reference_v<Range&&>)
    for (auto&& item : range)
      out.push_back(std::move(item));
  else
    for (auto&& item : range)
      out.push_back(item);
  return out;
}

/// `call(env)` once.
template <class R, class Call>
class apply_job final : public thread_job {
public:
  apply_job(Call call, std::shared_ptr<result_state<R>> result)
    : thread_job(1), call_(std::move(call)), result_(std::move(result)) {}

  std::size_t run(std::size_t, const worker_env& env) noexcept override {
    try {
      if constexpr (std::is_void_v<R>) {
        call_(env);
        outcome_.template emplace<1>();
      } else {
        outcome_.template emplace<1>(call_(env));
      }
      return 0;
    } catch (...) {
      outcome_.template emplace<2>(std::current_exception());
      return 1;
    }
  }

  void abandon(std::size_t, std::size_t, std::exception_ptr why) noexcept override {
    outcome_.template emplace<2>(std::move(why));
  }

private:
  void complete() noexcept override {
    if (outcome_.index() == 1)
      result_->set_value(std::move(std::get<1>(outcome_)));
    else
      result_->set_error(std::get<2>(outcome_));
  }

  Call call_;
  std::shared_ptr<result_state<R>> result_;
  std::variant<std::monostate, stored_t<R>, std::exception_ptr> outcome_;
};

/// `call(env, items[i])` for every item; the result is the vector of returns in input order, or
/// the exception of the lowest failing index. A chunk stops at its first failing item.
template <class R, class Items, class Call>
class map_job final : public thread_job {
public:
  map_job(Items items, std::size_t chunk_size, Call call,
          std::shared_ptr<result_state<typename map_results<R>::value>> result,
          progress_ptr progress = nullptr)
    : thread_job(chunking{items.size(), chunk_size}.chunk_count()),
      items_(std::move(items)), chunks_{items_.size(), chunk_size}, call_(std::move(call)),
      results_(items_.size(), std::move(result), std::move(progress)) {}

  std::size_t run(std::size_t chunk, const worker_env& env) noexcept override {
    const auto first = chunks_.begin(chunk), last = chunks_.end(chunk);
    for (auto i = first; i < last; ++i) {
      try {
        if constexpr (std::is_void_v<R>)
          call_(env, items_[i]);
        else
          results_.set(i, call_(env, items_[i]));
      } catch (...) {
        results_.fail(i, std::current_exception());
        results_.chunk_ended(last - first, 1); // the rest of the chunk is not run
        return 1;
      }
    }
    results_.chunk_ended(last - first, 0);
    return 0;
  }

  void abandon(std::size_t first, std::size_t last, std::exception_ptr why) noexcept override {
    results_.abandon(chunks_, first, last, std::move(why));
  }

private:
  void complete() noexcept override { results_.deliver(); }

  Items items_;
  chunking chunks_;
  Call call_;
  map_results<R> results_;
};

} // namespace troupe::detail
