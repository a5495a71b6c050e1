// What the items of a parallel action came to, one entry per item in item order: its value, or
// the exception it threw. Never lost: a failure is kept beside the values of the items that
// succeeded.
//
//   for (const auto& o : outcomes)
//     if (o.failed()) log(o.error()); else use(o.value());
//   R mine = outcomes.take(3);          // moves item 3's value out (rethrows if it failed)
//   std::vector<R> all = std::move(outcomes).values();   // parallel_action_failed if any failed
//
// Values sit in one array (detail/outcome_slots.hpp) and failures (rare) in a list beside it,
// so a trivial item costs a store of its value and of a flag, not of an exception pointer.
#pragma once

#include "troupe/actors/error.hpp"
#include "troupe/pools/detail/outcome_slots.hpp"
#include "troupe/pools/parallel_action_failed.hpp"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <iterator>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe {

namespace detail {
struct outcome_writer;
}

/// Every item's outcome of a parallel action (batchflow's): a value or the exception the item
/// threw, in item order; what inbatch_parallel hands its post function.
template <class R>
class outcomes {
  friend struct detail::outcome_writer;

public:
  /// One item's outcome, as seen through its outcomes.
  class entry {
  public:
    /// Whether the item threw.
    bool failed() const { return owner_->failed(index_); }
    /// The value (nothing for void); the item's exception rethrown if it failed.
    decltype(auto) value() const { return owner_->value(index_); }
    /// The exception the item threw; null if it succeeded.
    std::exception_ptr error() const { return owner_->error(index_); }
    /// The item's index.
    std::size_t index() const noexcept { return index_; }

  private:
    friend class outcomes;
    entry(const outcomes* owner, std::size_t index) : owner_(owner), index_(index) {}
    const outcomes* owner_;
    std::size_t index_;
  };

  /// Walks the outcomes in item order.
  class iterator {
  public:
    /// What the iterator gives.
    using value_type = entry;
    /// The distance between two iterators.
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    /// The outcome it is at.
    entry operator*() const { return (*owner_)[index_]; }
    /// To the next outcome.
    iterator& operator++() {
      ++index_;
      return *this;
    }
    /// To the next outcome; the iterator as it was.
    iterator operator++(int) {
      auto before = *this;
      ++index_;
      return before;
    }
    /// At the same outcome.
    bool operator==(const iterator&) const = default;

  private:
    friend class outcomes;
    iterator(const outcomes* owner, std::size_t index) : owner_(owner), index_(index) {}
    const outcomes* owner_ = nullptr;
    std::size_t index_ = 0;
  };

  /// `n` items, none reached yet (reading one is a state_error).
  explicit outcomes(std::size_t n = 0) : slots_(n) {}
  /// A copy: the values are copied, the exceptions shared.
  outcomes(const outcomes& other) : slots_(other.slots_), failures_(other.failures_) {}
  /// A copy: the values are copied, the exceptions shared.
  outcomes& operator=(const outcomes& other) {
    slots_ = other.slots_;
    failures_ = other.failures_;
    return *this;
  }
  /// Takes `other`'s outcomes.
  outcomes(outcomes&& other) noexcept
    : slots_(std::move(other.slots_)), failures_(std::move(other.failures_)) {}
  /// Takes `other`'s outcomes.
  outcomes& operator=(outcomes&& other) noexcept {
    slots_ = std::move(other.slots_);
    failures_ = std::move(other.failures_);
    return *this;
  }

  /// How many items there are.
  std::size_t size() const noexcept { return slots_.size(); }
  /// Item i's outcome.
  entry operator[](std::size_t i) const { return entry{this, i}; }
  /// Item i's outcome; invalid_argument if there is no item i.
  entry at(std::size_t i) const {
    if (i >= size())
      throw invalid_argument("outcome " + std::to_string(i) + " of " + std::to_string(size()) +
                             " items");
    return entry{this, i};
  }
  /// The first outcome.
  iterator begin() const { return {this, 0}; }
  /// Past the last outcome.
  iterator end() const { return {this, size()}; }

  /// Whether item i threw (or was never reached).
  bool failed(std::size_t i) const { return !slots_.has(i); }

  /// Item i's value (nothing for void); its exception rethrown if it failed.
  decltype(auto) value(std::size_t i) const {
    rethrow_if_failed(i);
    if constexpr (!std::is_void_v<R>)
      return slots_.get(i);
  }

  /// Moves item i's value out; rethrows its exception if it failed.
  R take(std::size_t i) {
    rethrow_if_failed(i);
    if constexpr (!std::is_void_v<R>)
      return std::move(slots_.get(i));
  }

  /// Every value, in item order, moved out (the whole vector handed over where R can be made
  /// empty); throws parallel_action_failed if any item failed. What most post functions want.
  std::vector<R> values() && requires(!std::is_void_v<R>) {
    if (!failures_.empty() || any_failed())
      throw parallel_action_failed(all_failures(), size());
    return slots_.take_all();
  }

  /// The exception item i threw; null if it succeeded; a state_error if it was never reached.
  std::exception_ptr error(std::size_t i) const {
    if (!failed(i))
      return nullptr;
    const auto it = failure_of(i);
    if (it != failures_.end())
      return it->second;
    return std::make_exception_ptr(
      state_error("item " + std::to_string(i) + "'s outcome was never reached"));
  }

  /// Whether any item failed (batchflow's any_action_failed).
  bool any_failed() const {
    if (!failures_.empty())
      return true;
    for (std::size_t i = 0; i < size(); ++i)
      if (failed(i))
        return true;
    return false;
  }

  /// (index, exception) of every failed item, items never reached included, in item order.
  std::vector<std::pair<std::size_t, std::exception_ptr>> all_failures() const {
    std::vector<std::pair<std::size_t, std::exception_ptr>> out;
    for (std::size_t i = 0; i < size(); ++i)
      if (failed(i))
        out.emplace_back(i, error(i));
    return out;
  }

  /// (index, exception) of every item that threw, in item order.
  const std::vector<std::pair<std::size_t, std::exception_ptr>>& failures() const noexcept {
    return failures_;
  }

private:
  auto failure_of(std::size_t i) const {
    const auto it = std::lower_bound(failures_.begin(), failures_.end(), i,
                                     [](const auto& f, std::size_t at) { return f.first < at; });
    return it != failures_.end() && it->first == i ? it : failures_.end();
  }

  void rethrow_if_failed(std::size_t i) const {
    if (failed(i))
      std::rethrow_exception(error(i));
  }

  detail::outcome_slots<R> slots_;
  std::vector<std::pair<std::size_t, std::exception_ptr>> failures_; // sorted once complete
  std::mutex failures_lock_; // items fail on several threads at once
};

/// Whether any item failed (batchflow's any_action_failed).
template <class R>
bool any_action_failed(const outcomes<R>& o) {
  return o.any_failed();
}

} // namespace troupe
