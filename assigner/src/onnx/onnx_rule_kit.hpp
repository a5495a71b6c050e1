// What the shape rules share (onnx_shape_rules.cpp, onnx_layout_rules.cpp): the facts of a
// node's inputs, and numpy's broadcasting.
#pragma once

#include "onnx_shape_rules.hpp"

#include <functional>
#include <optional>
#include <vector>

namespace troupe::detail::shape_rules {

using values = std::vector<std::int64_t>;
using facts_list = std::vector<tensor_facts>;
using inputs_t = std::vector<const tensor_facts*>;
using rule = std::function<std::optional<facts_list>(const onnx::NodeProto&, const inputs_t&)>;

/// Integer tensors of at most this many elements are evaluated (shape arithmetic).
inline constexpr std::size_t max_value_elements = 64;

inline bool is_integer_type(int type) {
  switch (type) {
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT64:
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL: return true;
  default: return false;
  }
}

inline const tensor_facts* in(const inputs_t& inputs, std::size_t i) {
  return i < inputs.size() ? inputs[i] : nullptr;
}
inline const dims* shape_of(const inputs_t& inputs, std::size_t i) {
  const auto* f = in(inputs, i);
  return f && f->shape ? &*f->shape : nullptr;
}
inline const values* value_of(const inputs_t& inputs, std::size_t i) {
  const auto* f = in(inputs, i);
  return f && f->value ? &*f->value : nullptr;
}
inline int type_of(const inputs_t& inputs, std::size_t i) {
  const auto* f = in(inputs, i);
  return f ? f->type : 0;
}

inline tensor_facts make(dims shape, int type, std::optional<values> value = std::nullopt) {
  tensor_facts f{std::move(shape), std::nullopt, type};
  if (value && is_integer_type(type) && value->size() <= max_value_elements)
    f.value = std::move(value);
  return f;
}

inline std::int64_t normalized_axis(std::int64_t axis, std::size_t rank) {
  return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

/// numpy's broadcast of two shapes; nullopt if they do not broadcast.
inline std::optional<dims> broadcast(const dims& a, const dims& b) {
  dims out(std::max(a.size(), b.size()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const auto y = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

/// Strides of a row-major shape.
inline dims strides_of(const dims& shape) {
  dims s(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

/// The element of `v` (of shape `from`) that index `at` of the broadcast shape `to` reads.
inline std::int64_t broadcast_read(const values& v, const dims& from, const dims& to,
                                   std::size_t at) {
  const auto to_strides = strides_of(to);
  const auto from_strides = strides_of(from);
  std::int64_t offset = 0;
  for (std::size_t d = 0; d < to.size(); ++d) {
    const auto index = (static_cast<std::int64_t>(at) / to_strides[d]) % to[d];
    const auto fd =
      static_cast<std::int64_t>(d) - static_cast<std::int64_t>(to.size() - from.size());
    if (fd >= 0 && from[static_cast<std::size_t>(fd)] != 1)
      offset += index * from_strides[static_cast<std::size_t>(fd)];
  }
  return v[static_cast<std::size_t>(offset)];
}

/// The axes an operator names, by input `at` (newer opsets) or attribute "axes" (older).
std::optional<values> axes_of(const onnx::NodeProto& n, const inputs_t& ins, std::size_t at);

/// The rules of operators that arrange data, and of the integer tensors computed on the way
/// (onnx_layout_rules.cpp).
std::optional<facts_list> flatten(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> reshape(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> transpose(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> shape_op(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> size_op(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> gather(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> concat(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> unsqueeze(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> squeeze(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> slice(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> split(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> expand(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> tile(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> range(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> constant_of_shape(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> pad(const onnx::NodeProto& n, const inputs_t& ins);
std::optional<facts_list> constant(const onnx::NodeProto& n, const inputs_t& ins);

} // namespace troupe::detail::shape_rules
