// Where troupe::outcomes keeps its items' values. A type that can be made empty sits in a plain
// std::vector beside a byte per item saying which are set, so outcomes<R>::values() hands the
// whole vector over without a copy; other types sit in std::optional; void keeps only the bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe::detail {

/// Whether an item's value is set. Not a char type on purpose: a store through unsigned char may
/// alias anything, so the compiler would reload every pointer of the lanes' loop after each one.
enum class slot_mark : unsigned char { empty, set };

template <class R>
class outcome_slots { // any R: optional values
public:
  explicit outcome_slots(std::size_t n) : values_(n) {}
  std::size_t size() const noexcept { return values_.size(); }
  bool has(std::size_t i) const noexcept { return values_[i].has_value(); }
  const R& get(std::size_t i) const { return *values_[i]; }
  R& get(std::size_t i) { return *values_[i]; }
  template <class V>
  void set(std::size_t i, V&& v) {
    values_[i].emplace(std::forward<V>(v));
  }
  /// Every value moved out, in order (all must be set).
  std::vector<R> take_all() {
    std::vector<R> out;
    out.reserve(values_.size());
    for (auto& v : values_)
      out.push_back(std::move(*v));
    return out;
  }

private:
  std::vector<std::optional<R>> values_;
};

template <class R>
requires(std::is_default_constructible_v<R> &&
         !std::is_same_v<R, bool>) class outcome_slots<R> { // (std::vector<bool> has no element to
                                                            // hand out by reference)
public:
  explicit outcome_slots(std::size_t n) : values_(n), set_(n) {}
  std::size_t size() const noexcept { return set_.size(); }
  bool has(std::size_t i) const noexcept { return set_[i] == slot_mark::set; }
  const R& get(std::size_t i) const { return values_[i]; }
  R& get(std::size_t i) { return values_[i]; }
  template <class V>
  void set(std::size_t i, V&& v) {
    values_[i] = std::forward<V>(v);
    set_[i] = slot_mark::set;
  }
  std::vector<R> take_all() { return std::move(values_); }

private:
  std::vector<R> values_;
  std::vector<slot_mark> set_;
};

template <>
class outcome_slots<void> {
public:
  explicit outcome_slots(std::size_t n) : set_(n) {}
  std::size_t size() const noexcept { return set_.size(); }
  bool has(std::size_t i) const noexcept { return set_[i] == slot_mark::set; }
  void set(std::size_t i) noexcept { set_[i] = slot_mark::set; }

private:
  std::vector<slot_mark> set_;
};

} // namespace troupe::detail
