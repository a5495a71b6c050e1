#include "onnx_shapes.hpp"

#include "onnx_shape_rules.hpp"

#include "troupe/actors/error.hpp"

#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>

namespace troupe::detail {

namespace {

/// An initializer's facts: its dims and type, and its elements if it is a small integer tensor
/// whose data was kept (onnx_reader.hpp).
tensor_facts initializer_facts(const onnx::TensorProto& t) {
  tensor_facts f{dims(t.dims().begin(), t.dims().end()), std::nullopt, t.data_type()};
  const auto count = static_cast<std::size_t>(element_count(*f.shape));
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (static_cast<std::size_t>(t.int64_data_size()) == count)
      f.value = std::vector<std::int64_t>(t.int64_data().begin(), t.int64_data().end());
    else if (t.raw_data().size() == count * 8) {
      f.value.emplace(count);
      std::memcpy(f.value->data(), t.raw_data().data(), count * 8);
    }
  } else if (t.data_type() == onnx::TensorProto::INT32 &&
             static_cast<std::size_t>(t.int32_data_size()) == count) {
    f.value = std::vector<std::int64_t>(t.int32_data().begin(), t.int32_data().end());
  }
  return f;
}

std::optional<dims> known_dims(const onnx::ValueInfoProto& v) {
  if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
    return std::nullopt;
  dims d;
  for (const auto& each : v.type().tensor_type().shape().dim()) {
    if (!each.has_dim_value())
      return std::nullopt;
    d.push_back(each.dim_value());
  }
  return d;
}

std::string dim_names(const onnx::GraphProto& graph) {
  std::set<std::string> names;
  for (const auto& input : graph.input())
    for (const auto& d : input.type().tensor_type().shape().dim())
      if (d.has_dim_param())
        names.insert(d.dim_param());
  std::string all;
  for (const auto& n : names)
    all += (all.empty() ? "" : ", ") + n;
  return all.empty() ? "none" : all;
}

} // namespace

shape_table::shape_table(onnx::ModelProto& model, const onnx_options& options) {
  auto& graph = *model.mutable_graph();
  bind_inputs(graph, options);
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception&) {
    // ONNX's inference stops at the first operator it cannot follow; troupe's pass below goes
    // on from what is known.
  }
  note_inferred(model.graph());
  propagate(model.graph());
}

void shape_table::bind_inputs(onnx::GraphProto& graph, const onnx_options& options) {
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) {
    initializers.insert(t.name());
    facts_[t.name()] = initializer_facts(t);
  }
  std::set<std::string> used;
  const auto names = dim_names(graph);
  for (auto& input : *graph.mutable_input()) {
    if (initializers.contains(input.name()) || !input.type().has_tensor_type())
      continue;
    auto& type = *input.mutable_type()->mutable_tensor_type();
    if (!type.has_shape())
      continue; // nothing known: its readers' shapes are estimated
    int axis = 0;
    for (auto& d : *type.mutable_shape()->mutable_dim()) {
      if (!d.has_dim_value()) {
        const std::string name = d.dim_param(); // a copy: dim_value replaces it
        if (auto at = options.dims.find(name); !name.empty() && at != options.dims.end()) {
          d.set_dim_value(at->second);
          used.insert(name);
        } else if (axis == 0) {
          d.set_dim_value(options.batch_size); // the batch, by every exporter's convention
        } else {
          throw invalid_argument("model_from_onnx: input '" + input.name() + "' has a symbolic " +
                                 "dimension '" + name + "' (axis " + std::to_string(axis) +
                                 ") that nothing binds: give its size in onnx_options::dims " +
                                 "(troupe-assign --dim " + (name.empty() ? "NAME" : name) +
                                 "=SIZE)");
        }
      }
      ++axis;
    }
    facts_[input.name()] = tensor_facts{known_dims(input), std::nullopt, type.elem_type()};
  }
  for (const auto& [name, size] : options.dims)
    if (!used.contains(name))
      throw invalid_argument(
        "model_from_onnx: onnx_options::dims names '" + name +
        "', a dimension no input of the model has (its symbolic dims: " + names + ")");
}

void shape_table::note_inferred(const onnx::GraphProto& graph) {
  for (const auto* list : {&graph.value_info(), &graph.output()})
    for (const auto& v : *list)
      if (auto d = known_dims(v))
        inferred_[v.name()] = *d;
  for (const auto& node : graph.node())
    for (const auto& a : node.attribute()) {
      if (a.has_g())
        note_inferred(a.g());
      for (const auto& g : a.graphs())
        note_inferred(g);
    }
}

const tensor_facts* shape_table::find(const std::string& tensor) const {
  auto at = facts_.find(tensor);
  return at == facts_.end() ? nullptr : &at->second;
}

const dims& shape_table::shape(const std::string& tensor) const {
  static const dims scalar;
  const auto* f = find(tensor);
  return f && f->shape ? *f->shape : scalar;
}

const onnx::GraphProto* subgraph(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name && a.has_g())
      return &a.g();
  return nullptr;
}

void shape_table::propagate(const onnx::GraphProto& graph) {
  for (const auto& node : graph.node()) {
    std::vector<const tensor_facts*> inputs;
    for (const auto& name : node.input())
      inputs.push_back(name.empty() ? nullptr : find(name));
    auto outputs = node.op_type() == "If" || node.op_type() == "Loop" || node.op_type() == "Scan"
                     ? through_subgraphs(node, inputs)
                     : apply_shape_rule(node, inputs);
    settle(node, outputs ? std::move(*outputs) : inferred_or_estimated(node, inputs));
  }
}

std::vector<tensor_facts>
shape_table::inferred_or_estimated(const onnx::NodeProto& node,
                                   const std::vector<const tensor_facts*>& inputs) {
  const tensor_facts* largest = nullptr;
  for (const auto* f : inputs)
    if (f && f->shape && (!largest || element_count(*f->shape) > element_count(*largest->shape)))
      largest = f;
  const int type = !inputs.empty() && inputs[0] ? inputs[0]->type : 0;
  std::vector<tensor_facts> outputs;
  for (const auto& name : node.output()) {
    if (auto at = inferred_.find(name); at != inferred_.end()) {
      outputs.push_back({at->second, std::nullopt, type});
      continue;
    }
    outputs.push_back({largest ? largest->shape : dims{}, std::nullopt, type});
    if (!name.empty())
      estimated_.push_back(name);
  }
  return outputs;
}

std::optional<std::vector<tensor_facts>>
shape_table::through_subgraphs(const onnx::NodeProto& node,
                               const std::vector<const tensor_facts*>& inputs) {
  const auto outputs_of = [&](const onnx::GraphProto& g, int from,
                              const std::function<std::optional<dims>(int, const dims&)>& stacked)
    -> std::optional<std::vector<tensor_facts>> {
    std::vector<tensor_facts> out;
    for (int i = from; i < g.output_size(); ++i) {
      const auto* f = find(g.output(i).name());
      if (!f || !f->shape)
        return std::nullopt;
      auto shape = stacked(i - from, *f->shape);
      if (!shape)
        return std::nullopt;
      out.push_back({*shape, std::nullopt, f->type});
    }
    return out;
  };
  const auto as_is = [](int, const dims& d) { return std::optional{d}; };
  if (node.op_type() == "If") {
    const auto *then_branch = subgraph(node, "then_branch"),
               *else_branch = subgraph(node, "else_branch");
    if (!then_branch || !else_branch)
      return std::nullopt;
    propagate(*then_branch);
    propagate(*else_branch);
    auto out = outputs_of(*then_branch, 0, as_is);
    return out ? out : outputs_of(*else_branch, 0, as_is);
  }
  const auto* body = subgraph(node, "body");
  if (!body)
    return std::nullopt;
  if (node.op_type() ==
      "Loop") { // body: (iteration, condition, carried...) -> (condition, carried..., scanned...)
    const int carried = node.input_size() - 2;
    if (body->input_size() != carried + 2)
      return std::nullopt;
    facts_[body->input(0).name()] = {dims{}, std::nullopt, onnx::TensorProto::INT64};
    facts_[body->input(1).name()] = {dims{}, std::nullopt, onnx::TensorProto::BOOL};
    for (int i = 0; i < carried; ++i)
      if (const auto* f = inputs[static_cast<std::size_t>(i + 2)])
        facts_[body->input(i + 2).name()] = *f;
    propagate(*body);
    const auto* trips = inputs.empty() ? nullptr : inputs[0];
    const bool counted = trips && trips->value && trips->value->size() == 1;
    return outputs_of(*body, 1, [&](int i, const dims& d) -> std::optional<dims> {
      if (i < carried)
        return d;
      if (!counted)
        return std::nullopt;
      dims stacked{(*trips->value)[0]};
      stacked.insert(stacked.end(), d.begin(), d.end());
      return stacked;
    });
  }
  // Scan: body (states..., one slice of each scanned input) -> (states..., one slice of each
  // output)
  const auto scanned = int_attribute(node, "num_scan_inputs", 0);
  const int states = node.input_size() - static_cast<int>(scanned);
  if (scanned <= 0 || states < 0 || body->input_size() != node.input_size())
    return std::nullopt;
  const auto axes =
    ints_attribute(node, "scan_input_axes").value_or(dims(static_cast<std::size_t>(scanned), 0));
  std::optional<std::int64_t> length;
  for (int i = 0; i < node.input_size(); ++i) {
    const auto* f = inputs[static_cast<std::size_t>(i)];
    if (!f || !f->shape)
      return std::nullopt;
    auto slice = *f->shape;
    if (i >= states) {
      const auto axis = static_cast<std::size_t>(axes[static_cast<std::size_t>(i - states)] < 0
                                                   ? axes[static_cast<std::size_t>(i - states)] +
                                                       static_cast<std::int64_t>(slice.size())
                                                   : axes[static_cast<std::size_t>(i - states)]);
      if (axis >= slice.size())
        return std::nullopt;
      length = slice[axis];
      slice.erase(slice.begin() + static_cast<std::ptrdiff_t>(axis));
    }
    facts_[body->input(i).name()] = {slice, std::nullopt, f->type};
  }
  propagate(*body);
  return outputs_of(*body, 0, [&](int i, const dims& d) -> std::optional<dims> {
    if (i < states)
      return d;
    dims stacked{*length};
    stacked.insert(stacked.end(), d.begin(), d.end());
    return stacked;
  });
}

void shape_table::settle(const onnx::NodeProto& node, std::vector<tensor_facts> outputs) {
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      facts_[node.output(i)] = std::move(outputs[static_cast<std::size_t>(i)]);
}

} // namespace troupe::detail
