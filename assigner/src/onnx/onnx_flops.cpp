#include "onnx_flops.hpp"

#include "onnx_shape_rules.hpp"

#include <algorithm>
#include <initializer_list>
#include <string_view>

namespace troupe::detail {

namespace {

/// An operator family's names as a set.
std::set<std::string> names_in(std::initializer_list<std::string_view> lists) {
  std::set<std::string> names;
  for (auto list : lists)
    for (auto& name : operator_names(list))
      names.insert(std::move(name));
  return names;
}

// Gather is an embedding's lookup: one copy an output element.
const std::set<std::string> one_per_element =
  names_in({unary_elementwise_ops, broadcasting_ops, "Gather GatherElements"});
const std::set<std::string> five_per_element = names_in({normalizing_ops});
const std::set<std::string> moves_data = names_in(
  {"Reshape Transpose Shape Size Constant Concat Slice Squeeze Unsqueeze Identity Flatten Cast "
   "CastLike Expand Split Dropout Range ConstantOfShape Tile Pad TopK ArgMax ArgMin Resize "
   "Upsample DepthToSpace SpaceToDepth ScatterND ScatterElements GatherND NonZero OneHot EyeLike "
   "RandomNormalLike RandomUniformLike SequenceConstruct"});

double elements(const shape_table& shapes, const std::string& tensor) {
  return element_count(shapes.shape(tensor));
}

/// LSTM (4 gates), GRU (3) and RNN (1): each step of each direction multiplies the input and
/// the hidden state into every gate, 2 * gates * hidden * (input + hidden), and spends 5 per
/// gate element on activations and the state's update.
double recurrent_flops(const onnx::NodeProto& n, const shape_table& shapes) {
  const auto& x = shapes.shape(n.input(0));
  if (x.size() != 3)
    return 0;
  const double gates = n.op_type() == "LSTM" ? 4 : n.op_type() == "GRU" ? 3 : 1;
  const auto hidden = static_cast<double>(int_attribute(n, "hidden_size", 0));
  double directions = 1;
  for (const auto& a : n.attribute())
    if (a.name() == "direction" && a.s() == "bidirectional")
      directions = 2;
  const double steps = static_cast<double>(x[0]) * static_cast<double>(x[1]); // seq * batch
  const auto input = static_cast<double>(x[2]);
  return steps * directions * (2 * gates * hidden * (input + hidden) + 5 * gates * hidden);
}

double subgraph_flops(const onnx::GraphProto& g, const shape_table& shapes,
                      std::set<std::string>& unknown) {
  double sum = 0;
  for (const auto& node : g.node())
    sum += flops_of(node, shapes, unknown);
  return sum;
}

double control_flow(const onnx::NodeProto& n, const shape_table& shapes,
                    std::set<std::string>& unknown) {
  if (n.op_type() == "If") { // the costlier branch
    const auto *a = subgraph(n, "then_branch"), *b = subgraph(n, "else_branch");
    return std::max(a ? subgraph_flops(*a, shapes, unknown) : 0.0,
                    b ? subgraph_flops(*b, shapes, unknown) : 0.0);
  }
  const auto* body = subgraph(n, "body");
  if (!body)
    return 0;
  double repetitions = 1;
  if (n.op_type() == "Loop") {
    const auto* trips = n.input_size() > 0 ? shapes.find(n.input(0)) : nullptr;
    if (trips && trips->value && trips->value->size() == 1)
      repetitions = static_cast<double>((*trips->value)[0]);
    else
      unknown.insert("Loop (trip count unknown: its body counted once)");
  } else if (n.output_size() > 0) { // Scan: its first scanned output's length
    const auto states = n.input_size() - int_attribute(n, "num_scan_inputs", 0);
    const auto& first =
      shapes.shape(n.output(static_cast<int>(std::min<std::int64_t>(states, n.output_size() - 1))));
    repetitions = first.empty() ? 1 : static_cast<double>(first[0]);
  }
  return repetitions * subgraph_flops(*body, shapes, unknown);
}

} // namespace

double flops_of(const onnx::NodeProto& n, const shape_table& shapes,
                std::set<std::string>& unknown) {
  const auto& op = n.op_type();
  const auto out = [&] { return n.output_size() > 0 ? elements(shapes, n.output(0)) : 0.0; };
  const bool bias = n.input_size() > 2 && !n.input(2).empty();
  if (op == "MatMul") {
    const auto& a = shapes.shape(n.input(0));
    return a.empty() ? 0 : 2 * out() * static_cast<double>(a.back());
  }
  if (op == "Gemm") {
    const auto& a = shapes.shape(n.input(0));
    if (a.size() != 2)
      return 0;
    const auto k = static_cast<double>(int_attribute(n, "transA", 0) ? a[0] : a[1]);
    return 2 * k * out() + (bias ? out() : 0);
  }
  if (op == "Conv") {
    const auto& w = shapes.shape(n.input(1));
    return w.empty() ? 0
                     : 2 * out() * element_count(dims(w.begin() + 1, w.end())) + (bias ? out() : 0);
  }
  if (op == "ConvTranspose") {
    const auto& w = shapes.shape(n.input(1));
    return w.size() < 2
             ? 0
             : 2 * elements(shapes, n.input(0)) * element_count(dims(w.begin() + 1, w.end())) +
                 (bias ? out() : 0);
  }
  if (op == "LSTM" || op == "GRU" || op == "RNN")
    return recurrent_flops(n, shapes);
  if (op == "If" || op == "Loop" || op == "Scan")
    return control_flow(n, shapes, unknown);
  if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
    const auto kernel = ints_attribute(n, "kernel_shape").value_or(dims{});
    return out() * element_count(kernel);
  }
  if (op.rfind("Global", 0) == 0 || op.rfind("Reduce", 0) == 0)
    return elements(shapes, n.input(0));
  if (five_per_element.contains(op))
    return 5 * out();
  if (one_per_element.contains(op))
    return out();
  if (moves_data.contains(op))
    return 0;
  unknown.insert(op);
  return out();
}

} // namespace troupe::detail
