#include "indexing.hpp"

#include "node_make.hpp"

#include "troupe/actors/error.hpp"

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

} // namespace

index_entry index_at(std::int64_t i) { return {what::integer, i, {}, {}, 1}; }
index_entry index_slice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop,
                        std::int64_t step) {
  return {what::slice, 0, start, stop, step};
}
index_entry index_newaxis() { return {what::new_axis, 0, {}, {}, 1}; }

node_ptr index(node_ptr x, std::vector<index_entry> entries) {
  if (!x)
    throw invalid_argument("index: the array is null");
  std::vector<std::int64_t> ints;
  std::size_t axis = 0;
  for (const auto& e : entries) {
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
  return detail::index_from_ints(std::move(x), std::move(ints));
}

node_ptr detail::index_from_ints(node_ptr x, std::vector<std::int64_t> ints) {
  if (!x)
    throw invalid_argument("index: the array is null");
  if (ints.size() % index_fields != 0)
    throw invalid_argument("index: " + std::to_string(ints.size()) + " index fields");
  shape_t shape;
  std::size_t axis = 0;
  for (std::size_t e = 0; e < ints.size(); e += index_fields) {
    const auto kind = ints[e], start = ints[e + 1], step = ints[e + 2], count = ints[e + 3];
    if (kind == static_cast<std::int64_t>(what::new_axis)) {
      shape.push_back(1);
      continue;
    }
    if (axis >= x->shape().size() || kind < 0 || kind > static_cast<std::int64_t>(what::slice))
      throw invalid_argument("index: an index beyond the axes of " + describe(x->shape()));
    const auto size = x->shape()[axis++];
    const auto last = start + (count - 1) * step;
    const bool fits = count == 0 || (start >= 0 && start < size && last >= 0 && last < size);
    if (is_symbolic(size) || count < 0 || !fits ||
        (kind == static_cast<std::int64_t>(what::integer) && count != 1))
      throw invalid_argument("index: an index out of range for axis " + std::to_string(axis - 1) +
                             " of " + describe(x->shape()));
    if (kind == static_cast<std::int64_t>(what::slice))
      shape.push_back(count);
  }
  for (; axis < x->shape().size(); ++axis)
    shape.push_back(x->shape()[axis]);
  const auto type = x->type();
  return make(kind::index, {}, {std::move(x)}, std::move(shape), type, std::move(ints));
}

} // namespace troupe::graph
