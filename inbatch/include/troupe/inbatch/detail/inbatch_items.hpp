// The arguments of every item of an inbatch_parallel call, by batchflow's rules: an init
// element's positional arguments, then the call's extra arguments (a per_item one at the item's
// index), then, for a method that takes them, the named arguments (the element's, with the
// call's laid over them). Threads read them in place; processes get them as value tuples.
#pragma once

#include "troupe/actors/error.hpp"
#include "troupe/inbatch/item_args.hpp"
#include "troupe/inbatch/named_args.hpp"

#include <cstddef>
#include <functional>
#include <ranges>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe::detail {

/// How an init element splits into positional and named arguments (see item_args.hpp).
template <class E>
struct element_parts { // anything else: one positional argument
  using values = std::tuple<E>;
  static constexpr bool has_named = false;
  static std::tuple<const E&> positional(const E& e) { return {e}; }
};
template <class... A>
struct element_parts<std::tuple<A...>> {
  using values = std::tuple<A...>;
  static constexpr bool has_named = false;
  static std::tuple<const A&...> positional(const std::tuple<A...>& e) {
    return std::apply([](const A&... a) { return std::tuple<const A&...>{a...}; }, e);
  }
};
template <class... A>
struct element_parts<item_args<A...>> {
  using values = std::tuple<A...>;
  static constexpr bool has_named = true;
  static std::tuple<const A&...> positional(const item_args<A...>& e) {
    return element_parts<std::tuple<A...>>::positional(e.positional);
  }
  static const named_args& named(const item_args<A...>& e) { return e.named; }
};
template <>
struct element_parts<named_args> {
  using values = std::tuple<>;
  static constexpr bool has_named = true;
  static std::tuple<> positional(const named_args&) { return {}; }
  static const named_args& named(const named_args& e) { return e; }
};

/// A call's extra argument as items see it: the same value for every item, or per item.
template <class X>
struct extra_arg {
  using value = X;
  extra_arg(const X& x, std::size_t) : shared(x) {}
  const X& at(std::size_t) const { return shared; }
  const X& shared;
};
template <class T>
struct extra_arg<per_item<T>> {
  using value = T;
  extra_arg(const per_item<T>& p, std::size_t items) : values(p.values) {
    if (values.size() != items)
      throw invalid_argument("per_item has " + std::to_string(values.size()) + " values for " +
                             std::to_string(items) + " items; it needs one value per item");
  }
  const T& at(std::size_t i) const { return values[i]; }
  const std::vector<T>& values;
};
template <class F>
struct extra_arg<per_item_fn<F>> {
  using value = std::decay_t<std::invoke_result_t<const F&>>;
  extra_arg(const per_item_fn<F>& p, std::size_t items) {
    made.reserve(items);
    for (std::size_t i = 0; i < items; ++i)
      made.push_back(std::invoke(p.make));
  }
  const value& at(std::size_t i) const { return made[i]; }
  std::vector<value> made;
};

/// Whether Method can be called with a Batch, positional arguments P and extras X, plainly
/// or with named arguments last.
template <class Method, class Batch, class Positional, class Extras>
struct item_signature;
template <class Method, class Batch, class... P, class... X>
struct item_signature<Method, Batch, std::tuple<P...>, std::tuple<X...>> {
  static constexpr bool plain = std::is_invocable_v<Method&, Batch&, const P&..., const X&...>;
  static constexpr bool with_named =
    std::is_invocable_v<Method&, Batch&, const P&..., const X&..., const named_args&>;
};

/// Every item's arguments: `Elements` is what the init made (a std::vector of elements, or a
/// random-access view such as iota), `Extras` the call's extra argument types (decayed).
template <class Batch, class Elements, class... Extras>
class item_calls {
  using element = std::ranges::range_value_t<Elements>;
  using parts = element_parts<element>;

public:
  item_calls(Batch& batch, const Elements& elements, const named_args& call_named,
             const Extras&... extras)
    : batch_(batch), elements_(elements), call_named_(call_named),
      extras_(extra_arg<Extras>(extras, std::ranges::size(elements))...) {}

  /// Whether items may differ in their named arguments (else all have the call's).
  static constexpr bool elements_have_named = parts::has_named;

  std::size_t size() const noexcept {
    return static_cast<std::size_t>(std::ranges::size(elements_));
  }
  Batch& batch() const noexcept { return batch_; }

  /// Whether a Method can be called with item arguments (plainly, or with named ones last).
  template <class Method>
  using signature = item_signature<Method, Batch, typename parts::values,
                                   std::tuple<typename extra_arg<Extras>::value...>>;
  template <class Method>
  static constexpr bool takes_named = signature<Method>::with_named;
  template <class Method>
  static constexpr bool callable = signature<Method>::plain || takes_named<Method>;

  /// The named arguments of item i: its own, with the call's laid over them.
  named_args named(std::size_t i) const {
    if constexpr (parts::has_named)
      return call_named_.over(parts::named(element_at(i)));
    else
      return call_named_;
  }

  /// Invokes `method(batch, arguments of item i...)`, with the named arguments when
  /// `WithNamed`.
  template <bool WithNamed, class Method>
  decltype(auto) invoke(Method& method, std::size_t i) const {
    decltype(auto) element = element_at(i); // a reference into a vector, a value from a view
    auto positional = parts::positional(element);
    auto extras =
      std::apply([i](const auto&... x) { return std::forward_as_tuple(x.at(i)...); }, extras_);
    if constexpr (WithNamed)
      return std::apply(method, std::tuple_cat(std::forward_as_tuple(batch_), positional, extras,
                                               std::tuple<named_args>{named(i)}));
    else
      return std::apply(method, std::tuple_cat(std::forward_as_tuple(batch_), positional, extras));
  }

  /// The arguments of item i as values, to travel to a worker process.
  template <bool WithNamed>
  auto values(std::size_t i) const {
    if constexpr (WithNamed)
      return std::tuple_cat(tuple_of_values(i), std::tuple<named_args>{named(i)});
    else
      return tuple_of_values(i);
  }

  template <bool WithNamed>
  using value_tuple = decltype(std::tuple_cat(
    std::declval<typename parts::values>(),
    std::declval<std::tuple<typename extra_arg<Extras>::value...>>(),
    std::declval<std::conditional_t<WithNamed, std::tuple<named_args>, std::tuple<>>>()));

  /// Names the named arguments item i has (or the call gives) that a method without a
  /// named_args parameter could not receive; empty if none.
  std::string named_nobody_takes(std::size_t i) const {
    std::string names;
    for (const auto& name : named(i).names())
      names += (names.empty() ? "" : ", ") + name;
    return names;
  }

private:
  decltype(auto) element_at(std::size_t i) const {
    return elements_[static_cast<std::ranges::range_difference_t<Elements>>(i)];
  }

  auto tuple_of_values(std::size_t i) const {
    return std::tuple_cat(
      typename parts::values(parts::positional(element_at(i))),
      std::apply(
        [i](const auto&... x) {
          return std::tuple<typename std::remove_cvref_t<decltype(x)>::value...>{x.at(i)...};
        },
        extras_));
  }

  Batch& batch_;
  const Elements& elements_;
  const named_args& call_named_;
  std::tuple<extra_arg<Extras>...> extras_;
};

} // namespace troupe::detail
