#include "onnx_rule_kit.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <unordered_map>

namespace troupe::detail {

namespace shape_rules {
namespace {

std::optional<std::int64_t> integer_op(const std::string& op, std::int64_t a, std::int64_t b) {
  if (op == "Add")
    return a + b;
  if (op == "Sub")
    return a - b;
  if (op == "Mul")
    return a * b;
  if (op == "Div")
    return b == 0 ? std::nullopt : std::optional{a / b};
  if (op == "Mod")
    return b == 0 ? std::nullopt : std::optional{a % b};
  if (op == "Max")
    return std::max(a, b);
  if (op == "Min")
    return std::min(a, b);
  if (op == "Equal")
    return a == b;
  if (op == "Less")
    return a < b;
  if (op == "Greater")
    return a > b;
  if (op == "LessOrEqual")
    return a <= b;
  if (op == "GreaterOrEqual")
    return a >= b;
  if (op == "And")
    return a && b;
  if (op == "Or")
    return a || b;
  return std::nullopt;
}

const std::set<std::string> comparisons{"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                                        "And",   "Or",   "Xor",     "Not",         "IsNaN",
                                        "IsInf"};

std::optional<facts_list> elementwise(const onnx::NodeProto& n, const inputs_t& ins) {
  std::optional<dims> out = dims{};
  for (std::size_t i = 0; i < ins.size() && out; ++i) {
    const auto* s = shape_of(ins, i);
    if (!s)
      return std::nullopt;
    out = broadcast(*out, *s);
  }
  if (!out)
    return std::nullopt;
  const int type = comparisons.contains(n.op_type()) ? onnx::TensorProto::BOOL : type_of(ins, 0);
  std::optional<values> value;
  const auto count = static_cast<std::size_t>(element_count(*out));
  if (ins.size() == 2 && value_of(ins, 0) && value_of(ins, 1) && count <= max_value_elements) {
    value.emplace();
    for (std::size_t i = 0; i < count && value; ++i) {
      auto r =
        integer_op(n.op_type(), broadcast_read(*value_of(ins, 0), *shape_of(ins, 0), *out, i),
                   broadcast_read(*value_of(ins, 1), *shape_of(ins, 1), *out, i));
      if (!r)
        value.reset();
      else
        value->push_back(*r);
    }
  }
  if (n.op_type() == "Where" && ins.size() == 3) {
    const int t = type_of(ins, 1);
    if (value_of(ins, 0) && value_of(ins, 1) && value_of(ins, 2) && count <= max_value_elements) {
      values v;
      for (std::size_t i = 0; i < count; ++i)
        v.push_back(broadcast_read(*value_of(ins, 0), *shape_of(ins, 0), *out, i)
                      ? broadcast_read(*value_of(ins, 1), *shape_of(ins, 1), *out, i)
                      : broadcast_read(*value_of(ins, 2), *shape_of(ins, 2), *out, i));
      return facts_list{make(*out, t, v)};
    }
    return facts_list{make(*out, t)};
  }
  if (n.op_type() == "Not" && value_of(ins, 0)) {
    values v;
    for (auto x : *value_of(ins, 0))
      v.push_back(!x);
    value = v;
  }
  return facts_list{make(*out, type, value)};
}

/// Operators whose first output has their first input's shape (and type, unless they cast).
std::optional<facts_list> same_shape(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* s = shape_of(ins, 0);
  if (!s)
    return std::nullopt;
  facts_list out;
  for (int i = 0; i < n.output_size(); ++i)
    out.push_back(make(*s, type_of(ins, 0)));
  if (n.op_type() == "Identity" && value_of(ins, 0))
    out[0].value = *value_of(ins, 0);
  if (n.op_type() == "Dropout" && out.size() > 1)
    out[1].type = onnx::TensorProto::BOOL;
  if (n.op_type() == "LayerNormalization" && out.size() > 1) { // mean and inverse deviation
    const auto axis = normalized_axis(int_attribute(n, "axis", -1), s->size());
    dims reduced = *s;
    for (auto d = static_cast<std::size_t>(axis); d < reduced.size(); ++d)
      reduced[d] = 1;
    for (std::size_t i = 1; i < out.size(); ++i)
      out[i] = make(reduced, type_of(ins, 0));
  }
  return out;
}

std::optional<facts_list> cast(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* s = shape_of(ins, 0);
  if (!s)
    return std::nullopt;
  const int to = static_cast<int>(int_attribute(n, "to", 0));
  std::optional<values> v;
  if (value_of(ins, 0) && is_integer_type(to))
    v = *value_of(ins, 0);
  return facts_list{make(*s, to, v)};
}

std::optional<facts_list> matmul(const onnx::NodeProto&, const inputs_t& ins) {
  const auto *a = shape_of(ins, 0), *b = shape_of(ins, 1);
  if (!a || !b || a->empty() || b->empty())
    return std::nullopt;
  dims x = *a, y = *b;
  const bool vector_a = x.size() == 1, vector_b = y.size() == 1;
  if (vector_a)
    x.insert(x.begin(), 1);
  if (vector_b)
    y.push_back(1);
  auto batch = broadcast(dims(x.begin(), x.end() - 2), dims(y.begin(), y.end() - 2));
  if (!batch)
    return std::nullopt;
  if (!vector_a)
    batch->push_back(x[x.size() - 2]);
  if (!vector_b)
    batch->push_back(y.back());
  return facts_list{make(*batch, type_of(ins, 0))};
}

std::optional<facts_list> gemm(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto *a = shape_of(ins, 0), *b = shape_of(ins, 1);
  if (!a || !b || a->size() != 2 || b->size() != 2)
    return std::nullopt;
  const auto m = int_attribute(n, "transA", 0) ? (*a)[1] : (*a)[0];
  const auto cols = int_attribute(n, "transB", 0) ? (*b)[0] : (*b)[1];
  return facts_list{make({m, cols}, type_of(ins, 0))};
}

/// The spatial sizes of a convolution or pooling window's output.
std::optional<dims> windowed(const onnx::NodeProto& n, const dims& input, const dims& kernel) {
  const auto spatial = input.size() - 2;
  if (kernel.size() != spatial)
    return std::nullopt;
  const auto strides = ints_attribute(n, "strides").value_or(dims(spatial, 1));
  const auto dilations = ints_attribute(n, "dilations").value_or(dims(spatial, 1));
  const auto pads = ints_attribute(n, "pads").value_or(dims(2 * spatial, 0));
  std::string auto_pad = "NOTSET";
  for (const auto& a : n.attribute())
    if (a.name() == "auto_pad")
      auto_pad = a.s();
  const bool ceil_mode = int_attribute(n, "ceil_mode", 0) != 0;
  dims out;
  for (std::size_t d = 0; d < spatial; ++d) {
    const auto size = input[d + 2], stride = strides[d];
    const auto extent = dilations[d] * (kernel[d] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out.push_back((size + stride - 1) / stride);
    } else if (auto_pad == "VALID") {
      out.push_back((size - extent) / stride + 1);
    } else {
      const auto span = size + pads[d] + pads[d + spatial] - extent;
      out.push_back((ceil_mode ? (span + stride - 1) / stride : span / stride) + 1);
    }
  }
  return out;
}

std::optional<facts_list> conv(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto *x = shape_of(ins, 0), *w = shape_of(ins, 1);
  if (!x || !w || x->size() < 3 || w->size() != x->size())
    return std::nullopt;
  auto kernel = ints_attribute(n, "kernel_shape").value_or(dims(w->begin() + 2, w->end()));
  auto spatial = windowed(n, *x, kernel);
  if (!spatial)
    return std::nullopt;
  dims out{(*x)[0], (*w)[0]};
  out.insert(out.end(), spatial->begin(), spatial->end());
  return facts_list{make(out, type_of(ins, 0))};
}

std::optional<facts_list> conv_transpose(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto *x = shape_of(ins, 0), *w = shape_of(ins, 1);
  if (!x || !w || x->size() < 3 || w->size() != x->size())
    return std::nullopt;
  const auto spatial = x->size() - 2;
  dims out{(*x)[0], (*w)[1] * int_attribute(n, "group", 1)};
  if (auto given = ints_attribute(n, "output_shape"); given && given->size() == spatial) {
    out.insert(out.end(), given->begin(), given->end());
    return facts_list{make(out, type_of(ins, 0))};
  }
  const auto strides = ints_attribute(n, "strides").value_or(dims(spatial, 1));
  const auto dilations = ints_attribute(n, "dilations").value_or(dims(spatial, 1));
  const auto pads = ints_attribute(n, "pads").value_or(dims(2 * spatial, 0));
  const auto extra = ints_attribute(n, "output_padding").value_or(dims(spatial, 0));
  for (std::size_t d = 0; d < spatial; ++d)
    out.push_back(strides[d] * ((*x)[d + 2] - 1) + extra[d] + ((*w)[d + 2] - 1) * dilations[d] + 1 -
                  pads[d] - pads[d + spatial]);
  return facts_list{make(out, type_of(ins, 0))};
}

std::optional<facts_list> pool(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  if (!x || x->size() < 3)
    return std::nullopt;
  dims out{(*x)[0], (*x)[1]};
  if (n.op_type().rfind("Global", 0) == 0) {
    out.resize(x->size(), 1);
  } else {
    auto kernel = ints_attribute(n, "kernel_shape");
    if (!kernel)
      return std::nullopt;
    auto spatial = windowed(n, *x, *kernel);
    if (!spatial)
      return std::nullopt;
    out.insert(out.end(), spatial->begin(), spatial->end());
  }
  facts_list result{make(out, type_of(ins, 0))};
  if (n.output_size() > 1) // MaxPool's indices
    result.push_back(make(out, onnx::TensorProto::INT64));
  return result;
}

std::optional<facts_list> reduce(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  if (!x)
    return std::nullopt;
  const bool keep = int_attribute(n, "keepdims", 1) != 0;
  std::optional<values> axes;
  if (n.op_type() == "ArgMax" || n.op_type() == "ArgMin")
    axes = values{int_attribute(n, "axis", 0)};
  else
    axes = axes_of(n, ins, 1);
  if (!axes && in(ins, 1))
    return std::nullopt;
  std::set<std::int64_t> reduced;
  if (!axes || axes->empty()) {
    if (int_attribute(n, "noop_with_empty_axes", 0) != 0)
      return facts_list{make(*x, type_of(ins, 0))};
    for (std::size_t d = 0; d < x->size(); ++d)
      reduced.insert(static_cast<std::int64_t>(d));
  } else {
    for (auto a : *axes)
      reduced.insert(normalized_axis(a, x->size()));
  }
  dims out;
  for (std::size_t d = 0; d < x->size(); ++d)
    if (!reduced.contains(static_cast<std::int64_t>(d)))
      out.push_back((*x)[d]);
    else if (keep)
      out.push_back(1);
  const bool arg = n.op_type().rfind("Arg", 0) == 0;
  return facts_list{make(out, arg ? onnx::TensorProto::INT64 : type_of(ins, 0))};
}

/// LSTM, GRU and RNN: Y [seq, directions, batch, hidden] (layout 0) or [batch, seq, directions,
/// hidden] (layout 1); the final states [directions, batch, hidden] (or [batch, directions,
/// hidden]).
std::optional<facts_list> recurrent(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  if (!x || x->size() != 3)
    return std::nullopt;
  const auto hidden = int_attribute(n, "hidden_size", 0);
  std::int64_t directions = 1;
  for (const auto& a : n.attribute())
    if (a.name() == "direction" && a.s() == "bidirectional")
      directions = 2;
  const bool batch_first = int_attribute(n, "layout", 0) != 0;
  const auto seq = batch_first ? (*x)[1] : (*x)[0], batch = batch_first ? (*x)[0] : (*x)[1];
  const int type = type_of(ins, 0);
  facts_list out{batch_first ? make({batch, seq, directions, hidden}, type)
                             : make({seq, directions, batch, hidden}, type)};
  for (int i = 1; i < n.output_size(); ++i)
    out.push_back(batch_first ? make({batch, directions, hidden}, type)
                              : make({directions, batch, hidden}, type));
  return out;
}

std::optional<facts_list> topk(const onnx::NodeProto& n, const inputs_t& ins) {
  const auto* x = shape_of(ins, 0);
  const auto* k = value_of(ins, 1);
  if (!x || !k || k->size() != 1)
    return std::nullopt;
  dims out = *x;
  out[static_cast<std::size_t>(normalized_axis(int_attribute(n, "axis", -1), x->size()))] = (*k)[0];
  return facts_list{make(out, type_of(ins, 0)), make(out, onnx::TensorProto::INT64)};
}

} // namespace
} // namespace shape_rules

namespace {

using namespace shape_rules;

const std::unordered_map<std::string, rule>& rules() {
  static const std::unordered_map<std::string, rule> table = [] {
    std::unordered_map<std::string, rule> t;
    for (const auto& op : operator_names(broadcasting_ops))
      t[op] = elementwise;
    for (const auto& list :
         {unary_elementwise_ops, normalizing_ops, std::string_view{"Identity Dropout"}})
      for (const auto& op : operator_names(list))
        t[op] = same_shape;
    t["Cast"] = cast;
    t["CastLike"] = cast;
    t["MatMul"] = matmul;
    t["Gemm"] = gemm;
    t["Conv"] = conv;
    t["ConvTranspose"] = conv_transpose;
    for (const char* op :
         {"MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})
      t[op] = pool;
    t["Flatten"] = flatten;
    t["Reshape"] = reshape;
    t["Transpose"] = transpose;
    t["Shape"] = shape_op;
    t["Size"] = size_op;
    t["Gather"] = gather;
    t["Concat"] = concat;
    t["Unsqueeze"] = unsqueeze;
    t["Squeeze"] = squeeze;
    t["Slice"] = slice;
    t["Split"] = split;
    t["Expand"] = expand;
    t["Tile"] = tile;
    t["Range"] = range;
    t["ConstantOfShape"] = constant_of_shape;
    t["Constant"] = constant;
    for (const char* op :
         {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
          "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin"})
      t[op] = reduce;
    for (const char* op : {"LSTM", "GRU", "RNN"})
      t[op] = recurrent;
    t["TopK"] = topk;
    t["Pad"] = pad;
    return t;
  }();
  return table;
}

} // namespace

std::optional<std::vector<tensor_facts>>
apply_shape_rule(const onnx::NodeProto& node, const std::vector<const tensor_facts*>& inputs) {
  const auto& table = rules();
  auto at = table.find(node.op_type());
  if (at == table.end())
    return std::nullopt;
  auto out = at->second(node, inputs);
  if (out && static_cast<int>(out->size()) < node.output_size())
    return std::nullopt;
  // A model's own numbers (a Reshape target of -5, say) must not make a negative size: such an
  // output is left to ONNX's inference, or estimated.
  if (out && std::any_of(out->begin(), out->end(), [](const tensor_facts& f) {
        return f.shape &&
               std::any_of(f.shape->begin(), f.shape->end(), [](std::int64_t d) { return d < 0; });
      }))
    return std::nullopt;
  return out;
}

std::vector<std::string> operator_names(std::string_view list) {
  std::vector<std::string> names;
  for (std::size_t at = 0; at < list.size();) {
    const auto end = std::min(list.find(' ', at), list.size());
    if (end > at)
      names.emplace_back(list.substr(at, end - at));
    at = end + 1;
  }
  return names;
}

std::int64_t int_attribute(const onnx::NodeProto& node, const std::string& name,
                           std::int64_t fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name)
      return a.i();
  return fallback;
}

std::optional<std::vector<std::int64_t>> ints_attribute(const onnx::NodeProto& node,
                                                        const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name)
      return std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
  return std::nullopt;
}

double element_count(const dims& shape) {
  return std::accumulate(shape.begin(), shape.end(), 1.0,
                         [](double p, std::int64_t x) { return p * static_cast<double>(x); });
}

} // namespace troupe::detail
