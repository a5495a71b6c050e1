// The standard init functions of inbatch_parallel (batchflow's 'indices', 'items', 'run_once'
// and a component's name). Each returns one element per item (see item_args.hpp).
//
//   troupe::inits::indices            one call per index: the batch's indices() if it has them,
//                                     else 0 .. size(batch) - 1 (a view, not a vector)
//   troupe::inits::items              one call per item, given batch[index]
//   troupe::inits::run_once           exactly one call, with only the call's extra arguments
//   troupe::inits::component("images")  one call per row of batch.component("images"), which
//                                     returns a range of rows (an unknown name should throw
//                                     troupe::invalid_argument naming it)
#pragma once

#include <cstddef>
#include <iterator>
#include <ranges>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe::inits {

namespace detail {
template <class Batch>
concept has_indices = requires(const Batch& b) {
  std::ranges::begin(b.indices());
};

template <class Batch>
auto indices_of(const Batch& b) {
  if constexpr (has_indices<Batch>) {
    using index = std::ranges::range_value_t<decltype(b.indices())>;
    const auto& ix = b.indices();
    return std::vector<index>(std::ranges::begin(ix), std::ranges::end(ix));
  } else {
    return std::views::iota(std::size_t{0}, std::size(b)); // no memory per item
  }
}
} // namespace detail

/// A call per item, given its index (batchflow's init=indices).
struct indices_t {
  /// The batch's indices.
  template <class Batch>
  auto operator()(const Batch& b) const {
    return detail::indices_of(b);
  }
};
inline constexpr indices_t indices{};

/// A call per item, given the item itself (batchflow's init=items).
struct items_t {
  /// The batch's items.
  template <class Batch>
  auto operator()(const Batch& b) const {
    using item = std::decay_t<decltype(b[detail::indices_of(b).front()])>;
    std::vector<item> out;
    for (const auto& ix : detail::indices_of(b))
      out.push_back(b[ix]);
    return out;
  }
};
inline constexpr items_t items{};

/// One call with no per-item arguments (batchflow's run_once).
struct run_once_t {
  /// One empty argument list.
  template <class Batch>
  std::vector<std::tuple<>> operator()(const Batch&) const {
    return {std::tuple<>{}};
  }
};
inline constexpr run_once_t run_once{};

/// One call per row of the component `name` of the batch (b.component(name)).
struct component {
  /// The component's name.
  std::string name;

  /// The component's rows.
  template <class Batch>
  auto operator()(Batch& b) const {
    const auto& rows = b.component(name);
    using row = std::ranges::range_value_t<decltype(rows)>;
    return std::vector<row>(std::ranges::begin(rows), std::ranges::end(rows));
  }
};

} // namespace troupe::inits
