// The shapes of operators that arrange data (Reshape, Transpose, Gather, Concat, Slice, Split,
// ...), and the values of the small integer tensors exporters compute shapes with.
#include "onnx_rule_kit.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <set>

namespace troupe::detail::shape_rules {

std::optional<facts_list> flatten(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  if (!x)
    return std::nullopt;
  const auto axis = normalized_axis(int_attribute(n, "axis", 1), x->size());
  const auto outer = element_count(dims(x->begin(), x->begin() + axis));
  const auto inner = element_count(dims(x->begin() + axis, x->end()));
  return facts_list{
    make({static_cast<std::int64_t>(outer), static_cast<std::int64_t>(inner)}, type_of(ins, 0))};
}

std::optional<facts_list> reshape(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  const auto* target = value_of(ins, 1);
  if (!x || !target)
    return std::nullopt;
  const bool allow_zero = int_attribute(n, "allowzero", 0) != 0;
  dims out = *target;
  std::optional<std::size_t> free;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allow_zero) {
      if (i >= x->size())
        return std::nullopt;
      out[i] = (*x)[i];
    } else if (out[i] == -1) {
      if (free)
        return std::nullopt;
      free = i;
    }
  }
  if (free) {
    out[*free] = 1;
    const auto rest = element_count(out);
    if (rest == 0)
      return std::nullopt;
    out[*free] = static_cast<std::int64_t>(element_count(*x) / rest);
  }
  return facts_list{
    make(out, type_of(ins, 0), value_of(ins, 0) ? std::optional{*value_of(ins, 0)} : std::nullopt)};
}

std::optional<facts_list> transpose(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  if (!x)
    return std::nullopt;
  auto perm = ints_attribute(n, "perm");
  if (!perm) {
    perm.emplace(x->size());
    std::iota(perm->rbegin(), perm->rend(), 0);
  }
  dims out;
  for (auto p : *perm) {
    if (p < 0 || static_cast<std::size_t>(p) >= x->size())
      return std::nullopt;
    out.push_back((*x)[static_cast<std::size_t>(p)]);
  }
  return facts_list{make(out, type_of(ins, 0))};
}

std::optional<facts_list> shape_op(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  if (!x)
    return std::nullopt;
  const auto rank = static_cast<std::int64_t>(x->size());
  auto clamp = [&](std::int64_t i) {
    return std::clamp(i < 0 ? i + rank : i, std::int64_t{0}, rank);
  };
  const auto start = clamp(int_attribute(n, "start", 0));
  const auto end = clamp(int_attribute(n, "end", rank));
  values v(x->begin() + start, x->begin() + std::max(start, end));
  return facts_list{make({static_cast<std::int64_t>(v.size())}, onnx::TensorProto::INT64, v)};
}

std::optional<facts_list> size_op(const onnx::NodeProto&, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  if (!x)
    return std::nullopt;
  return facts_list{
    make({}, onnx::TensorProto::INT64, values{static_cast<std::int64_t>(element_count(*x))})};
}

std::optional<facts_list> gather(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto *x = shape_of(ins, 0), *indices = shape_of(ins, 1);
  if (!x || !indices || x->empty())
    return std::nullopt;
  const auto axis =
    static_cast<std::size_t>(normalized_axis(int_attribute(n, "axis", 0), x->size()));
  dims out(x->begin(), x->begin() + static_cast<std::ptrdiff_t>(axis));
  out.insert(out.end(), indices->begin(), indices->end());
  out.insert(out.end(), x->begin() + static_cast<std::ptrdiff_t>(axis) + 1, x->end());
  std::optional<values> v;
  if (value_of(ins, 0) && value_of(ins, 1) && x->size() == 1) { // picks from a vector
    v.emplace();
    for (auto i : *value_of(ins, 1)) {
      const auto at = i < 0 ? i + (*x)[0] : i;
      if (at < 0 || at >= (*x)[0])
        return facts_list{make(out, type_of(ins, 0))};
      v->push_back((*value_of(ins, 0))[static_cast<std::size_t>(at)]);
    }
  }
  return facts_list{make(out, type_of(ins, 0), v)};
}

std::optional<facts_list> concat(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* first = shape_of(ins, 0);
  if (!first)
    return std::nullopt;
  const auto axis =
    static_cast<std::size_t>(normalized_axis(int_attribute(n, "axis", 0), first->size()));
  dims out = *first;
  out[axis] = 0;
  std::optional<values> v = values{};
  for (std::size_t i = 0; i < ins.size(); ++i) {
    const auto* s = shape_of(ins, i);
    if (!s || s->size() != first->size())
      return std::nullopt;
    out[axis] += (*s)[axis];
    if (v && value_of(ins, i) && s->size() == 1)
      v->insert(v->end(), value_of(ins, i)->begin(), value_of(ins, i)->end());
    else
      v.reset();
  }
  return facts_list{make(out, type_of(ins, 0), v)};
}

/// The axes an operator names, by input `at` (newer opsets) or attribute "axes" (older).
std::optional<values> axes_of(const onnx::NodeProto& n, const inputs_t& ins, std::size_t at) {
  if (in(ins, at))
    return value_of(ins, at) ? std::optional{*value_of(ins, at)} : std::nullopt;
  return ints_attribute(n, "axes");
}

std::optional<facts_list> unsqueeze(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  const auto axes = axes_of(n, ins, 1);
  if (!x || !axes)
    return std::nullopt;
  dims out = *x;
  const auto rank = x->size() + axes->size();
  std::vector<std::int64_t> sorted;
  for (auto a : *axes)
    sorted.push_back(normalized_axis(a, rank));
  std::sort(sorted.begin(), sorted.end());
  for (auto a : sorted) {
    if (a < 0 || static_cast<std::size_t>(a) > out.size())
      return std::nullopt;
    out.insert(out.begin() + a, 1);
  }
  return facts_list{
    make(out, type_of(ins, 0), value_of(ins, 0) ? std::optional{*value_of(ins, 0)} : std::nullopt)};
}

std::optional<facts_list> squeeze(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  if (!x)
    return std::nullopt;
  std::set<std::int64_t> drop;
  if (auto axes = axes_of(n, ins, 1)) {
    for (auto a : *axes)
      drop.insert(normalized_axis(a, x->size()));
  } else if (in(ins, 1)) {
    return std::nullopt; // axes given but not known
  } else {
    for (std::size_t d = 0; d < x->size(); ++d)
      if ((*x)[d] == 1)
        drop.insert(static_cast<std::int64_t>(d));
  }
  dims out;
  for (std::size_t d = 0; d < x->size(); ++d)
    if (!drop.contains(static_cast<std::int64_t>(d)))
      out.push_back((*x)[d]);
  return facts_list{
    make(out, type_of(ins, 0), value_of(ins, 0) ? std::optional{*value_of(ins, 0)} : std::nullopt)};
}

std::optional<facts_list> slice(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  if (!x)
    return std::nullopt;
  std::optional<values> starts, ends, axes, steps;
  if (n.input_size() > 1) { // opset 10 on: inputs
    if (!value_of(ins, 1) || !value_of(ins, 2))
      return std::nullopt;
    starts = *value_of(ins, 1);
    ends = *value_of(ins, 2);
    if (in(ins, 3) && !(axes = axes_of(n, ins, 3)))
      return std::nullopt;
    if (in(ins, 4)) {
      if (!value_of(ins, 4))
        return std::nullopt;
      steps = *value_of(ins, 4);
    }
  } else {
    starts = ints_attribute(n, "starts");
    ends = ints_attribute(n, "ends");
    axes = ints_attribute(n, "axes");
  }
  if (!starts || !ends || starts->size() != ends->size())
    return std::nullopt;
  if (!axes) {
    axes.emplace(starts->size());
    std::iota(axes->begin(), axes->end(), 0);
  }
  dims out = *x;
  std::vector<std::array<std::int64_t, 3>> ranges(x->size()); // start, end, step per axis
  for (std::size_t d = 0; d < x->size(); ++d)
    ranges[d] = {0, (*x)[d], 1};
  for (std::size_t i = 0; i < starts->size(); ++i) {
    const auto axis = normalized_axis((*axes)[i], x->size());
    if (axis < 0 || static_cast<std::size_t>(axis) >= x->size())
      return std::nullopt;
    const auto size = (*x)[static_cast<std::size_t>(axis)];
    const auto step = steps ? (*steps)[i] : 1;
    if (step == 0)
      return std::nullopt;
    auto clamp = [&](std::int64_t v) {
      if (v < 0)
        v += size;
      return step > 0 ? std::clamp(v, std::int64_t{0}, size)
                      : std::clamp(v, std::int64_t{-1}, size - 1);
    };
    const auto s = clamp((*starts)[i]), e = clamp((*ends)[i]);
    const auto count = step > 0 ? (e - s + step - 1) / step : (s - e - step - 1) / -step;
    out[static_cast<std::size_t>(axis)] = std::max<std::int64_t>(count, 0);
    ranges[static_cast<std::size_t>(axis)] = {s, e, step};
  }
  std::optional<values> v;
  if (value_of(ins, 0) && x->size() == 1) {
    v.emplace();
    const auto [s, e, step] = ranges[0];
    for (auto i = s; step > 0 ? i < e : i > e; i += step)
      v->push_back((*value_of(ins, 0))[static_cast<std::size_t>(i)]);
  }
  return facts_list{make(out, type_of(ins, 0), v)};
}

std::optional<facts_list> split(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  if (!x)
    return std::nullopt;
  const auto axis =
    static_cast<std::size_t>(normalized_axis(int_attribute(n, "axis", 0), x->size()));
  std::optional<values> sizes;
  if (in(ins, 1))
    sizes = value_of(ins, 1) ? std::optional{*value_of(ins, 1)} : std::nullopt;
  else
    sizes = ints_attribute(n, "split");
  if (!sizes) {
    if (in(ins, 1))
      return std::nullopt;
    const auto parts = static_cast<std::int64_t>(n.output_size());
    const auto each = ((*x)[axis] + parts - 1) / parts;
    sizes.emplace();
    for (std::int64_t i = 0, left = (*x)[axis]; i < parts; ++i, left -= each)
      sizes->push_back(std::min(each, left));
  }
  if (static_cast<int>(sizes->size()) != n.output_size())
    return std::nullopt;
  facts_list out;
  for (auto size : *sizes) {
    dims s = *x;
    s[axis] = size;
    out.push_back(make(s, type_of(ins, 0)));
  }
  return out;
}

std::optional<facts_list> expand(const onnx::NodeProto&, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  const auto* target = value_of(ins, 1);
  if (!x || !target)
    return std::nullopt;
  auto out = broadcast(*x, *target);
  if (!out)
    return std::nullopt;
  std::optional<values> v;
  if (value_of(ins, 0) && element_count(*out) <= max_value_elements) {
    v.emplace();
    for (std::size_t i = 0; i < static_cast<std::size_t>(element_count(*out)); ++i)
      v->push_back(broadcast_read(*value_of(ins, 0), *x, *out, i));
  }
  return facts_list{make(*out, type_of(ins, 0), v)};
}

std::optional<facts_list> tile(const onnx::NodeProto&, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  const auto* repeats = value_of(ins, 1);
  if (!x || !repeats || repeats->size() != x->size())
    return std::nullopt;
  dims out = *x;
  for (std::size_t d = 0; d < out.size(); ++d)
    out[d] *= (*repeats)[d];
  return facts_list{make(out, type_of(ins, 0))};
}

std::optional<facts_list> range(const onnx::NodeProto&, const inputs_t& ins) {
  const auto *start = value_of(ins, 0), *limit = value_of(ins, 1), *delta = value_of(ins, 2);
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 ||
      delta->size() != 1 || (*delta)[0] == 0)
    return std::nullopt;
  const auto d = (*delta)[0];
  const auto count =
    std::max<std::int64_t>(((*limit)[0] - (*start)[0] + d - (d > 0 ? 1 : -1)) / d, 0);
  values v;
  if (static_cast<std::size_t>(count) <= max_value_elements)
    for (std::int64_t i = 0; i < count; ++i)
      v.push_back((*start)[0] + i * d);
  return facts_list{
    make({count}, type_of(ins, 0),
         static_cast<std::size_t>(count) <= max_value_elements ? std::optional{v} : std::nullopt)};
}

std::optional<facts_list> constant_of_shape(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* target = value_of(ins, 0);
  if (!target)
    return std::nullopt;
  int type = onnx::TensorProto::FLOAT;
  std::optional<std::int64_t> fill = 0;
  for (const auto& a : n.attribute())
    if (a.name() == "value") {
      type = a.t().data_type();
      fill = a.t().int64_data_size() > 0 ? std::optional{a.t().int64_data(0)} : std::nullopt;
    }
  std::optional<values> v;
  if (fill && element_count(*target) <= max_value_elements)
    v = values(static_cast<std::size_t>(element_count(*target)), *fill);
  return facts_list{make(*target, type, v)};
}

std::optional<facts_list> pad(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  std::optional<values> pads =
    in(ins, 1) ? (value_of(ins, 1) ? std::optional{*value_of(ins, 1)} : std::nullopt)
               : ints_attribute(n, "pads");
  if (!x || !pads || pads->size() != 2 * x->size())
    return std::nullopt;
  dims out = *x;
  for (std::size_t d = 0; d < out.size(); ++d)
    out[d] += (*pads)[d] + (*pads)[d + out.size()];
  return facts_list{make(out, type_of(ins, 0))};
}

std::optional<facts_list> constant(const onnx::NodeProto& n, const inputs_t&) {
  for (const auto& a : n.attribute()) {
    if (a.name() == "value") {
      const auto& t = a.t();
      dims shape(t.dims().begin(), t.dims().end());
      std::optional<values> v;
      if (t.data_type() == onnx::TensorProto::INT64 && t.int64_data_size() > 0)
        v = values(t.int64_data().begin(), t.int64_data().end());
      else if (t.data_type() == onnx::TensorProto::INT32 && t.int32_data_size() > 0)
        v = values(t.int32_data().begin(), t.int32_data().end());
      else if (t.data_type() == onnx::TensorProto::INT64 && !t.raw_data().empty()) {
        v.emplace(t.raw_data().size() / 8);
        std::memcpy(v->data(), t.raw_data().data(), v->size() * 8);
      }
      return facts_list{make(shape, t.data_type(), v)};
    }
    if (a.name() == "value_int")
      return facts_list{make({}, onnx::TensorProto::INT64, values{a.i()})};
    if (a.name() == "value_ints")
      return facts_list{
        make({a.ints_size()}, onnx::TensorProto::INT64, values(a.ints().begin(), a.ints().end()))};
    if (a.name() == "value_float")
      return facts_list{make({}, onnx::TensorProto::FLOAT)};
    if (a.name() == "value_floats")
      return facts_list{make({a.floats_size()}, onnx::TensorProto::FLOAT)};
  }
  return std::nullopt;
}

} // namespace troupe::detail::shape_rules
