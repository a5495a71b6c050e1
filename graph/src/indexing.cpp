#include "indexing.hpp"

#include "node_make.hpp"

#include <algorithm>

namespace troupe::graph {

namespace {

using what = index_entry::what;

/// Python's slice.indices(size): the first element, and how many there are.
std::pair<std::int64_t, std::int64_t> slice_span(const index_entry& e, std::int64_t size) {
  if (e.step == 0)
    throw invalid_argument("index: a slice's step is 0");
  const auto clamp = [&](std::int64_t i) {
    if (i < 0)
      i += size;
    if (i < 0)
      return e.step < 0 ? std::int64_t{-1} : std::int64_t{0};
    if (i >= size)
      return e.step < 0 ? size - 1 : size;
    return i;
  };
  const auto start = e.start ? clamp(*e.start) : (e.step > 0 ? 0 : size - 1);
  const auto stop = e.stop ? clamp(*e.stop) : (e.step > 0 ? size : -1);
  const auto count =
    e.step > 0 ? (stop - start + e.step - 1) / e.step : (start - stop - e.step - 1) / -e.step;
  return {start, std::max<std::int64_t>(count, 0)};
}

/// numpy's broadcast of the index arrays' shapes.
shape_t broadcast_all(const std::vector<shape_t>& shapes) {
  shape_t out;
  for (const auto& s : shapes) {
    if (s.size() > out.size())
      out.insert(out.begin(), s.size() - out.size(), 1);
    for (std::size_t i = 0; i < s.size(); ++i) {
      auto& d = out[out.size() - s.size() + i];
      if (s[i] == d || s[i] == 1)
        continue;
      if (d != 1)
        throw invalid_argument("index: index arrays of shapes that do not broadcast: " +
                               describe(s) + " against " + describe(out));
      d = s[i];
    }
  }
  return out;
}

/// Whether the advanced entries (by entry) stand together.
bool together(const std::vector<bool>& advanced) {
  const auto first = std::find(advanced.begin(), advanced.end(), true);
  const auto last = std::find(advanced.rbegin(), advanced.rend(), true).base();
  return std::all_of(first, last, [](bool b) { return b; });
}

/// Checks one basic entry against an axis of `size`.
void check_entry(const std::int64_t* f, std::int64_t size, std::size_t axis, const shape_t& x) {
  const auto start = f[1], step = f[2], count = f[3];
  const auto last = start + (count - 1) * step;
  const bool fits = count == 0 || (start >= 0 && start < size && last >= 0 && last < size);
  if (is_symbolic(size) || count < 0 || !fits || (step == 0 && count > 1) ||
      (f[0] == static_cast<std::int64_t>(what::integer) && count != 1))
    throw invalid_argument("index: an index out of range for axis " + std::to_string(axis) +
                           " of " + describe(x));
}

} // namespace

index_entry index_at(std::int64_t i) { return {what::integer, i, {}, {}, 1, nullptr}; }
index_entry index_slice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop,
                        std::int64_t step) {
  return {what::slice, 0, start, stop, step, nullptr};
}
index_entry index_newaxis() { return {what::new_axis, 0, {}, {}, 1, nullptr}; }
index_entry index_array(node_ptr indices) {
  if (!indices)
    throw invalid_argument("index: an index array is null");
  return {what::array, 0, {}, {}, 1, std::move(indices)};
}

node_ptr index(node_ptr x, std::vector<index_entry> entries) {
  if (!x)
    throw invalid_argument("index: the array is null");
  std::vector<node_ptr> children{x};
  std::vector<std::int64_t> ints;
  std::size_t axis = 0;
  for (auto& e : entries) {
    if (e.kind == what::new_axis) {
      ints.insert(ints.end(), {static_cast<std::int64_t>(what::new_axis), 0, 0, 1});
      continue;
    }
    if (axis >= x->shape().size())
      throw invalid_argument("index: more indices than the " + std::to_string(x->shape().size()) +
                             " axes of " + describe(x->shape()));
    const auto size = x->shape()[axis++];
    if (is_symbolic(size))
      throw invalid_argument("index: axis " + std::to_string(axis - 1) + " is size parameter '" +
                             symbol_name(size) + "': its indices cannot be checked");
    if (e.kind == what::array) {
      ints.insert(ints.end(), {static_cast<std::int64_t>(what::array),
                               static_cast<std::int64_t>(children.size()), 0, 0});
      children.push_back(std::move(e.indices));
      continue;
    }
    if (e.kind == what::integer) {
      if (e.value < -size || e.value >= size)
        throw invalid_argument("index: " + std::to_string(e.value) + " is out of range for axis " +
                               std::to_string(axis - 1) + " of size " + std::to_string(size));
      ints.insert(ints.end(), {static_cast<std::int64_t>(what::integer),
                               e.value < 0 ? e.value + size : e.value, 0, 1});
      continue;
    }
    const auto [start, count] = slice_span(e, size);
    ints.insert(ints.end(), {static_cast<std::int64_t>(what::slice), start, e.step, count});
  }
  return detail::index_from_ints(std::move(children), std::move(ints));
}

detail::index_layout detail::layout_of(const shape_t& x, const std::vector<std::int64_t>& ints,
                                       const std::vector<shape_t>& arrays) {
  if (ints.size() % index_fields != 0)
    throw invalid_argument("index: " + std::to_string(ints.size()) + " index fields");
  const auto entries = ints.size() / index_fields;
  std::vector<bool> advanced(entries, false);
  std::vector<shape_t> advanced_shapes;
  bool any_array = false;
  for (std::size_t e = 0; e < entries; ++e)
    any_array = any_array || ints[e * index_fields] == static_cast<std::int64_t>(what::array);
  index_layout layout;
  layout.out_axis.assign(entries, -1);
  for (std::size_t e = 0; e < entries; ++e) {
    const auto* f = &ints[e * index_fields];
    if (f[0] < 0 || f[0] > static_cast<std::int64_t>(what::array))
      throw invalid_argument("index: an entry of kind " + std::to_string(f[0]));
    if (f[0] == static_cast<std::int64_t>(what::new_axis)) {
      if (f[3] != 1) // its size: read back from bytes, it could claim any
        throw invalid_argument("index: a new axis of size " + std::to_string(f[3]));
      continue;
    }
    if (layout.reached >= x.size())
      throw invalid_argument("index: more indices than the axes of " + describe(x));
    const auto axis = layout.reached++;
    if (f[0] == static_cast<std::int64_t>(what::array)) {
      if (f[1] < 1 || static_cast<std::size_t>(f[1]) >= arrays.size() || is_symbolic(x[axis]))
        throw invalid_argument("index: an index array out of place for axis " +
                               std::to_string(axis) + " of " + describe(x));
      advanced[e] = true;
      advanced_shapes.push_back(arrays[static_cast<std::size_t>(f[1])]);
      continue;
    }
    check_entry(f, x[axis], axis, x);
    advanced[e] = any_array && f[0] == static_cast<std::int64_t>(what::integer);
  }
  if (any_array)
    layout.block = broadcast_all(advanced_shapes);
  const bool first = any_array && !together(advanced);
  std::size_t out = first ? layout.block.size() : 0;
  bool placed = first;
  for (std::size_t e = 0; e < entries; ++e) {
    const auto kind = static_cast<what>(ints[e * index_fields]);
    if (advanced[e]) {
      if (!placed) {
        layout.block_start = out;
        out += layout.block.size();
        placed = true;
      }
    } else if (kind == what::slice || kind == what::new_axis) {
      layout.out_axis[e] = static_cast<std::int64_t>(out++);
    }
  }
  layout.rest_start = out;
  layout.shape.assign(out + (x.size() - layout.reached), 0);
  for (std::size_t e = 0; e < entries; ++e)
    if (layout.out_axis[e] >= 0)
      layout.shape[static_cast<std::size_t>(layout.out_axis[e])] = ints[e * index_fields + 3];
  std::copy(layout.block.begin(), layout.block.end(),
            layout.shape.begin() + static_cast<std::ptrdiff_t>(layout.block_start));
  std::copy(x.begin() + static_cast<std::ptrdiff_t>(layout.reached), x.end(),
            layout.shape.begin() + static_cast<std::ptrdiff_t>(layout.rest_start));
  return layout;
}

node_ptr detail::index_from_ints(std::vector<node_ptr> children, std::vector<std::int64_t> ints) {
  if (children.empty() ||
      std::any_of(children.begin(), children.end(), [](const node_ptr& c) { return c == nullptr; }))
    throw invalid_argument("index: an operand is null");
  std::vector<shape_t> arrays{{}};
  for (std::size_t c = 1; c < children.size(); ++c)
    arrays.push_back(children[c]->shape());
  auto shape = layout_of(children[0]->shape(), ints, arrays).shape;
  const auto type = children[0]->type();
  return make(kind::index, {}, std::move(children), std::move(shape), type, std::move(ints));
}

} // namespace troupe::graph
