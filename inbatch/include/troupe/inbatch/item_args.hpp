// The arguments of one item of a parallel action (troupe/inbatch/inbatch_parallel.hpp), as an
// init function returns them, and per-item values among a call's extra arguments.
//
// An init function returns one element per item; an element is
//   - troupe::item_args{std::tuple{a, b}, named}   positional arguments a, b and named ones,
//   - std::tuple<A...>                             positional arguments only,
//   - troupe::named_args                           named arguments only,
//   - anything else (an index, a row, a string)    one positional argument.
// Unlike batchflow, where a 2-tuple of (tuple, dict) is read as (args, kwargs) and two
// positional arguments that happen to look so are misread, only item_args carries both.
//
// Among a call's extra arguments, per_item({v0, v1, ...}) gives item i the value vi (batchflow's
// P), and per_item_fn(f) calls f() once per item, before any item runs (batchflow's PP).
#pragma once

#include "troupe/inbatch/named_args.hpp"

#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe {

/// One item's arguments: positional ones and named ones.
template <class... A>
struct item_args {
  /// The positional arguments, in order.
  std::tuple<A...> positional;
  /// The named arguments (laid under the call's).
  named_args named;
};
template <class... A>
item_args(std::tuple<A...>, named_args = {}) -> item_args<A...>;

/// Positional arguments of one item: item_args<A...> with no named ones.
template <class... A>
item_args<std::decay_t<A>...> positional(A&&... args) {
  return {std::tuple<std::decay_t<A>...>{std::forward<A>(args)...}, {}};
}

/// Item i of the action gets values[i]; there must be one value per item.
template <class T>
struct per_item {
  /// One value an item, in item order.
  std::vector<T> values;
};
template <class T>
per_item(std::vector<T>) -> per_item<T>;
template <class T>
per_item(std::initializer_list<T>) -> per_item<T>;

/// Item i gets a value of its own, made by make() (called once per item, in item order, on the
/// calling thread before any item runs).
template <class F>
struct per_item_fn {
  /// Makes an item's value.
  F make;
};
template <class F>
per_item_fn(F) -> per_item_fn<F>;

} // namespace troupe
