// The index node (numpy's indexing): its normalized form, where each index reads and writes,
// and its evaluation.
#pragma once

#include "troupe/actors/error.hpp"
#include "troupe/graph/node.hpp"

#include <xtensor/xarray.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace troupe::graph::detail {

/// How index() keeps an entry in ints(), four integers each: an integer (integer, i, 0, 1), a
/// slice (slice, start, step, count), a new axis (new_axis, 0, 0, 1), an integer array
/// (array, its child's position, 0, 0); all within `x`'s axes.
inline constexpr std::size_t index_fields = 4;

/// Where the entries of an index node read and write. With integer arrays among them, the
/// arrays and the integers are numpy's advanced indices: their broadcast shape (`block`) sits
/// where they stand when they stand together, else first.
struct index_layout {
  shape_t shape; // the result's
  std::vector<std::int64_t> out_axis; // by entry: the result axis a slice or new axis fills
  std::size_t block_start = 0;
  shape_t block;
  std::size_t reached = 0; // the input axes the entries index
  std::size_t rest_start = 0; // the result axis of the first input axis they do not
};

/// The layout of `ints` over an array of shape `x`, the index arrays' shapes given by child
/// position (1 on); invalid_argument naming what does not fit.
index_layout layout_of(const shape_t& x, const std::vector<std::int64_t>& ints,
                       const std::vector<shape_t>& arrays);

/// The index node of children[0] for entries already in that form (serialization reads them
/// back); invalid_argument unless they fit.
node_ptr index_from_ints(std::vector<node_ptr> children, std::vector<std::int64_t> ints);

/// The element of `v` (of shape `from`) that position `at` of the broadcast shape `to` reads.
template <class T>
T broadcast_element(const xt::xarray<T>& v, const std::vector<std::size_t>& at, const shape_t& to) {
  std::size_t offset = 0, stride = 1;
  const auto rank = v.dimension();
  for (std::size_t d = rank; d-- > 0;) {
    const auto extent = v.shape()[d];
    const auto index = extent == 1 ? 0 : at[to.size() - rank + d];
    offset += index * stride;
    stride *= extent;
  }
  return v.data()[offset];
}

/// `n`'s value, given its children's (the array, then the index arrays).
template <class T>
xt::xarray<T> indexed(const node& n, const std::vector<const xt::xarray<T>*>& values) {
  std::vector<shape_t> arrays{{}};
  for (std::size_t c = 1; c < values.size(); ++c)
    arrays.push_back(n.children()[c]->shape());
  const auto& x = *values[0];
  const auto& ints = n.ints();
  const auto layout = layout_of(n.children()[0]->shape(), ints, arrays);
  std::vector<std::size_t> shape(layout.shape.begin(), layout.shape.end());
  xt::xarray<T> out(shape);
  std::vector<std::size_t> at(shape.size(), 0), in_block(layout.block.size(), 0),
    source(x.dimension(), 0);
  for (std::size_t flat = 0; flat < out.size(); ++flat) {
    std::copy_n(at.begin() + static_cast<std::ptrdiff_t>(layout.block_start), in_block.size(),
                in_block.begin());
    std::size_t axis = 0;
    for (std::size_t e = 0; e < ints.size() / index_fields; ++e) {
      const auto* f = &ints[e * index_fields];
      switch (static_cast<index_entry::what>(f[0])) {
      case index_entry::what::new_axis: continue;
      case index_entry::what::integer: source[axis] = static_cast<std::size_t>(f[1]); break;
      case index_entry::what::slice:
        source[axis] = static_cast<std::size_t>(
          f[1] +
          static_cast<std::int64_t>(at[static_cast<std::size_t>(layout.out_axis[e])]) * f[2]);
        break;
      case index_entry::what::array: {
        const auto v =
          broadcast_element(*values[static_cast<std::size_t>(f[1])], in_block, layout.block);
        const auto size = static_cast<double>(x.shape()[axis]);
        const auto i =
          static_cast<double>(v) < 0 ? static_cast<double>(v) + size : static_cast<double>(v);
        if (std::floor(i) != i || i < 0 || i >= size)
          throw invalid_argument("index: " + std::to_string(static_cast<double>(v)) +
                                 " in an index array is no index of axis " + std::to_string(axis) +
                                 " (size " + std::to_string(x.shape()[axis]) + ")");
        source[axis] = static_cast<std::size_t>(i);
        break;
      }
      }
      ++axis;
    }
    for (std::size_t d = layout.reached; d < x.dimension(); ++d)
      source[d] = at[layout.rest_start + d - layout.reached];
    out.data()[flat] = x.element(source.begin(), source.end());
    for (std::size_t d = shape.size(); d-- > 0;) { // the next result index, row-major
      if (++at[d] < shape[d])
        break;
      at[d] = 0;
    }
  }
  return out;
}

} // namespace troupe::graph::detail
