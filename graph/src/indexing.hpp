// The index node (numpy's basic indexing): its normalized form, and its evaluation.
#pragma once

#include "troupe/graph/node.hpp"

#include <xtensor/xarray.hpp>

#include <cstdint>
#include <vector>

namespace troupe::graph::detail {

/// How index() keeps an entry in ints(), four integers each: (what, start, step, count), where
/// an integer is (integer, i, 0, 1) and a new axis (new_axis, 0, 0, 1), all within `x`'s axes.
inline constexpr std::size_t index_fields = 4;

/// The index node of `x` for entries already in that form (serialization reads them back):
/// invalid_argument unless each lies within `x`'s axes.
node_ptr index_from_ints(node_ptr x, std::vector<std::int64_t> ints);

/// `n`'s value, given its operand's.
template <class T>
xt::xarray<T> indexed(const node& n, const xt::xarray<T>& x) {
  // Each output axis reads an input axis from `start` by `step`, or is a new axis; an integer
  // fixes its input axis at `start`.
  struct reading {
    std::int64_t input_axis = -1, start = 0, step = 0;
  };
  std::vector<reading> out_axes;
  std::vector<std::int64_t> fixed(x.dimension(), 0);
  std::size_t axis = 0;
  const auto& ints = n.ints();
  for (std::size_t e = 0; e < ints.size(); e += index_fields) {
    const auto what = static_cast<index_entry::what>(ints[e]);
    if (what == index_entry::what::new_axis) {
      out_axes.push_back({});
      continue;
    }
    if (what == index_entry::what::integer)
      fixed[axis] = ints[e + 1];
    else
      out_axes.push_back({static_cast<std::int64_t>(axis), ints[e + 1], ints[e + 2]});
    ++axis;
  }
  for (; axis < x.dimension(); ++axis)
    out_axes.push_back({static_cast<std::int64_t>(axis), 0, 1});
  std::vector<std::size_t> shape;
  for (auto d : n.shape())
    shape.push_back(static_cast<std::size_t>(d));
  xt::xarray<T> out(shape);
  std::vector<std::size_t> at(shape.size(), 0);
  std::vector<std::size_t> source(x.dimension(), 0);
  for (std::size_t flat = 0; flat < out.size(); ++flat) {
    for (std::size_t d = 0; d < x.dimension(); ++d)
      source[d] = static_cast<std::size_t>(fixed[d]);
    for (std::size_t d = 0; d < out_axes.size(); ++d)
      if (out_axes[d].input_axis >= 0)
        source[static_cast<std::size_t>(out_axes[d].input_axis)] = static_cast<std::size_t>(
          out_axes[d].start + static_cast<std::int64_t>(at[d]) * out_axes[d].step);
    out.data()[flat] = x.element(source.begin(), source.end());
    for (std::size_t d = shape.size(); d-- > 0;) { // the next output index, row-major
      if (++at[d] < shape[d])
        break;
      at[d] = 0;
    }
  }
  return out;
}

} // namespace troupe::graph::detail
