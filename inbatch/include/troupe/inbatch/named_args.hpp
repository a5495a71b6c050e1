// Named arguments, the C++ form of Python's keyword arguments where a call's shape is decided
// at run time (inbatch_parallel's init elements, decorator extras and call options):
//
//   troupe::named_args opts{{"scale", 2.0}, {"mode", "reflect"}, {"repeat", 3}};
//   double s = opts.get<double>("scale");          // troupe::invalid_argument if missing
//   int r = opts.get_or("retries", 1);
//
// Values are numbers, booleans and strings, so they can travel to worker processes.
#pragma once

#include "troupe/actors/error.hpp"

#include <cereal/types/map.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/variant.hpp>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace troupe {

/// Keyword arguments (Python's **kwargs) of an inbatch_parallel call or item: values by name, each
/// a bool, an integer, a number or a string.
class named_args {
public:
  /// What a named argument may hold.
  using value = std::variant<bool, std::int64_t, double, std::string>;

  named_args() = default;
  /// The arguments given, as {{"scale", 0.5}, {"mode", "fast"}}.
  named_args(std::initializer_list<std::pair<const std::string, value>> values) : values_(values) {}

  /// Sets `name`, replacing what it held.
  named_args& set(std::string name, value v) {
    values_.insert_or_assign(std::move(name), std::move(v));
    return *this;
  }

  /// Whether there is an argument named `name`.
  bool contains(std::string_view name) const { return values_.find(name) != values_.end(); }
  /// Whether there is none.
  bool empty() const noexcept { return values_.empty(); }
  /// How many there are.
  std::size_t size() const noexcept { return values_.size(); }

  /// The names, sorted.
  std::vector<std::string> names() const;

  /// The value of `name` as T (a number, bool or std::string). Throws troupe::invalid_argument
  /// naming the argument if it is missing or holds another kind of value (a number converts to
  /// another number type when it fits exactly).
  template <class T>
  T get(std::string_view name) const {
    const auto it = values_.find(name);
    if (it == values_.end())
      throw invalid_argument("named argument '" + std::string{name} + "' is missing");
    return convert<T>(name, it->second);
  }

  /// The value of `name` as T, or `fallback` when there is none (invalid_argument if it holds
  /// another kind of value).
  template <class T>
  T get_or(std::string_view name, T fallback) const {
    const auto it = values_.find(name);
    return it == values_.end() ? fallback : convert<T>(name, it->second);
  }

  /// These arguments laid over `base`: a name in both keeps this one's value.
  named_args over(const named_args& base) const {
    named_args merged = base;
    for (const auto& [name, v] : values_)
      merged.values_.insert_or_assign(name, v);
    return merged;
  }

  /// The same names with the same values.
  friend bool operator==(const named_args&, const named_args&) = default;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(values_);
  }

private:
  template <class T>
  static T convert(std::string_view name, const value& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      if (const auto* s = std::get_if<std::string>(&v))
        return *s;
    } else if constexpr (std::is_same_v<T, bool>) {
      if (const auto* b = std::get_if<bool>(&v))
        return *b;
    } else if constexpr (std::is_arithmetic_v<T>) {
      if (const auto* i = std::get_if<std::int64_t>(&v); i && fits<T>(*i))
        return static_cast<T>(*i);
      if (const auto* d = std::get_if<double>(&v); d && std::is_floating_point_v<T>)
        return static_cast<T>(*d);
    } else {
      static_assert(std::is_arithmetic_v<T>, "named_args hold numbers, bools and strings");
    }
    throw invalid_argument("named argument '" + std::string{name} + "' holds " + kind_of(v) +
                           ", which does not convert to the type asked for");
  }

  /// Whether `i` converts to T exactly (any arithmetic type: std::in_range takes neither
  /// floating-point nor character types).
  template <class T>
  static bool fits(std::int64_t i) {
    if constexpr (std::is_floating_point_v<T>) {
      const auto x = static_cast<T>(i);
      return x >= T(-9.223372036854775808e18) && x < T(9.223372036854775808e18) &&
             static_cast<std::int64_t>(x) == i;
    } else if constexpr (std::is_signed_v<T>) {
      return i >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
             i <= static_cast<std::int64_t>(std::numeric_limits<T>::max());
    } else {
      return i >= 0 && static_cast<std::uint64_t>(i) <= std::numeric_limits<T>::max();
    }
  }

  static std::string kind_of(const value& v);

  std::map<std::string, value, std::less<>> values_;
};

} // namespace troupe
