#include "troupe/assigner/onnx_model.hpp"

#include "troupe/actors/error.hpp"

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

namespace troupe {

namespace {

using dims = std::vector<std::int64_t>; // -1: unknown

const std::set<std::string> one_flop_per_element{
  "Add", "Sub",   "Mul",         "Div", "Relu", "LeakyRelu", "Sigmoid",    "Tanh", "Gelu",
  "Erf", "Sqrt",  "Pow",         "Exp", "Log",  "Neg",       "Abs",        "Clip", "Max",
  "Min", "Where", "HardSigmoid", "Elu", "Selu", "Softplus",  "Reciprocal", "Cast"};
const std::set<std::string> five_flops_per_element{"Softmax", "LogSoftmax", "LayerNormalization",
                                                   "BatchNormalization", "InstanceNormalization"};

/// Bytes of one element of an ONNX tensor type (4 when unknown).
double element_bytes(int type) {
  switch (type) {
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64: return 8;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16: return 2;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL: return 1;
  default: return 4;
  }
}

double product(const dims& d) {
  return std::accumulate(d.begin(), d.end(), 1.0,
                         [](double p, std::int64_t x) { return p * double(x); });
}

/// A parsed model with every tensor's shape that inference could find.
class onnx_graph {
public:
  onnx_graph(const std::string& bytes, const onnx_options& options) {
    if (!model_.ParseFromString(bytes) || !model_.has_graph() || model_.graph().node_size() == 0)
      throw invalid_argument("model_from_onnx: not an ONNX model (no graph of operators)");
    for (auto& input : *model_.mutable_graph()->mutable_input()) {
      if (!input.type().tensor_type().has_shape())
        continue; // no shape at all: inference may find none either (mutable_shape would add one)
      for (auto& d : *input.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
        if (!d.has_dim_value())
          d.set_dim_value(options.batch_size); // a symbolic dim, as "batch" or "N"
    }
    try {
      onnx::shape_inference::InferShapes(model_);
    } catch (const std::exception& e) {
      throw invalid_argument(std::string{"model_from_onnx: shape inference failed: "} + e.what());
    }
    const auto& g = model_.graph();
    for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
      for (const auto& v : *list)
        note(v);
    for (const auto& init : g.initializer())
      initializers_.emplace(init.name(), &init);
  }

  const onnx::GraphProto& graph() const { return model_.graph(); }

  const onnx::TensorProto* initializer(const std::string& name) const {
    auto at = initializers_.find(name);
    return at == initializers_.end() ? nullptr : at->second;
  }

  /// The shape of `tensor`; invalid_argument naming it if unknown.
  dims shape(const std::string& tensor, const char* needed_for) const {
    if (const auto* init = initializer(tensor))
      return {init->dims().begin(), init->dims().end()};
    auto at = shapes_.find(tensor);
    if (at == shapes_.end() ||
        std::any_of(at->second.begin(), at->second.end(), [](std::int64_t d) { return d < 0; }))
      throw invalid_argument("model_from_onnx: the shape of tensor '" + tensor +
                             "' is unknown, and its " + needed_for + " are needed");
    return at->second;
  }

private:
  void note(const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
      return;
    dims d;
    for (const auto& each : v.type().tensor_type().shape().dim())
      d.push_back(each.has_dim_value() ? each.dim_value() : -1);
    shapes_[v.name()] = std::move(d);
  }

  onnx::ModelProto model_;
  std::map<std::string, dims> shapes_;
  std::map<std::string, const onnx::TensorProto*> initializers_;
};

std::int64_t int_attribute(const onnx::NodeProto& n, const std::string& name,
                           std::int64_t fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name)
      return a.i();
  return fallback;
}

double flops_of(const onnx::NodeProto& n, const onnx_graph& g) {
  const auto& op = n.op_type();
  const auto out = [&] { return product(g.shape(n.output(0), "FLOPs")); };
  if (op == "MatMul")
    return 2 * double(g.shape(n.input(0), "FLOPs").back()) * out();
  if (op == "Gemm") {
    const auto a = g.shape(n.input(0), "FLOPs");
    const double k = double(int_attribute(n, "transA", 0) ? a.front() : a.back());
    return 2 * k * out() + (n.input_size() > 2 ? out() : 0);
  }
  if (op == "Conv") {
    const auto w = g.shape(n.input(1), "FLOPs");
    return 2 * out() * product(dims(w.begin() + 1, w.end()));
  }
  if (five_flops_per_element.contains(op))
    return 5 * out();
  if (one_flop_per_element.contains(op))
    return out();
  return 0;
}

/// The module of each operator, by index, and the modules' names in order of first operator.
std::vector<std::size_t> group(const onnx::GraphProto& g, std::size_t depth,
                               std::vector<std::string>& names) {
  std::map<std::string, std::size_t> index;
  std::vector<std::size_t> module_of;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& node = g.node(i);
    std::vector<std::string> parts;
    std::string part;
    for (char c : node.name() + "/")
      if (c == '/' || c == '.') {
        if (!part.empty())
          parts.push_back(std::move(part));
        part.clear();
      } else {
        part += c;
      }
    std::string name;
    if (parts.empty())
      name = node.op_type() + "_" + std::to_string(i); // unnamed: a module of its own
    else if (depth == 0)
      name = node.name();
    else
      for (std::size_t k = 0; k < std::min(depth, parts.size()); ++k)
        name += (k ? "." : "") + parts[k];
    auto [at, fresh] = index.emplace(name, names.size());
    if (fresh)
      names.push_back(name);
    module_of.push_back(at->second);
  }
  return module_of;
}

} // namespace

onnx_model model_from_onnx_bytes(const std::string& bytes, const onnx_options& options) {
  const onnx_graph g{bytes, options};
  std::vector<std::string> names;
  const auto module_of = group(g.graph(), options.group_depth, names);
  if (names.size() < 2)
    throw invalid_argument("model_from_onnx: grouping at depth " +
                           std::to_string(options.group_depth) + " makes one module ('" +
                           names.front() + "'): nothing to place apart");
  onnx_model model;
  for (const auto& name : names)
    model.modules.push_back({name, 0, 0.0});
  std::map<std::string, std::size_t> producer; // tensor -> module
  std::vector<std::set<std::string>> params(names.size());
  std::map<std::pair<std::size_t, std::size_t>, double> flows;
  std::set<std::pair<std::string, std::size_t>> counted; // (tensor, reader module)
  const auto& nodes = g.graph().node();
  for (int i = 0; i < nodes.size(); ++i) {
    const auto& node = nodes[i];
    const auto m = module_of[static_cast<std::size_t>(i)];
    auto& spec = model.modules[m];
    *spec.complexity += flops_of(node, g);
    for (const auto& input : node.input()) {
      if (input.empty())
        continue; // an omitted optional input
      if (const auto* init = g.initializer(input)) {
        if (params[m].insert(input).second)
          spec.size_bytes += product({init->dims().begin(), init->dims().end()}) *
                             element_bytes(init->data_type()) * options.size_multiplier;
      } else if (auto from = producer.find(input);
                 from != producer.end() && from->second != m && counted.emplace(input, m).second) {
        flows[{from->second, m}] += product(g.shape(input, "bytes")) * options.dtype_bytes;
      }
    }
    for (const auto& output : node.output()) {
      if (output.empty())
        continue;
      producer[output] = m;
      spec.size_bytes += product(g.shape(output, "bytes")) * options.dtype_bytes;
    }
  }
  for (const auto& [pair, bytes] : flows)
    model.connections.push_back({pair.first, pair.second, bytes});
  return model;
}

onnx_model model_from_onnx(const std::filesystem::path& path, const onnx_options& options) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    throw invalid_argument("model_from_onnx: cannot read " + path.string());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  try {
    return model_from_onnx_bytes(bytes.str(), options);
  } catch (const invalid_argument& e) {
    throw invalid_argument(path.string() + ": " + e.what());
  }
}

} // namespace troupe
