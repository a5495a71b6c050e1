// Every tensor's shape in an ONNX model, as exporters leave it: the symbolic dims of the inputs
// bound (onnx_options::batch_size and dims), ONNX's own inference run, then a pass of troupe's
// over the graph that evaluates the small integer tensors which feed shapes (Shape, Gather,
// Concat, Range, ...; PyTorch's exporter computes shapes at run time) and propagates shapes
// through the operators exporters emit, control flow and recurrent operators included. A tensor
// whose shape is still unknown gets an estimate from its producer's inputs, and is listed.
#pragma once

#include "troupe/assigner/onnx_model.hpp"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace troupe::detail {

using dims = std::vector<std::int64_t>;

/// The subgraph attribute `name` of `node` (If's branches, Loop's and Scan's body), or null.
const onnx::GraphProto* subgraph(const onnx::NodeProto& node, const std::string& name);

/// What is known of one tensor.
struct tensor_facts {
  std::optional<dims> shape; // every dim known
  std::optional<std::vector<std::int64_t>> value; // a small integer tensor's elements
  int type = 0; // ONNX element type; 0: unknown
};

class shape_table {
public:
  /// Binds `model`'s inputs (it is changed: their symbolic dims get values) and works out every
  /// tensor's shape; invalid_argument naming a symbolic dim nothing binds.
  shape_table(onnx::ModelProto& model, const onnx_options& options);

  /// The tensor's facts, or null if the model has no such tensor.
  const tensor_facts* find(const std::string& tensor) const;
  /// Its shape: known, or estimated.
  const dims& shape(const std::string& tensor) const;
  /// The tensors whose shapes are estimates, in graph order.
  const std::vector<std::string>& estimated() const { return estimated_; }

private:
  void bind_inputs(onnx::GraphProto& graph, const onnx_options& options);
  void note_inferred(const onnx::GraphProto& graph);
  void propagate(const onnx::GraphProto& graph);
  /// If, Loop and Scan: their subgraphs propagated, their outputs from the subgraphs'.
  std::optional<std::vector<tensor_facts>>
  through_subgraphs(const onnx::NodeProto& node, const std::vector<const tensor_facts*>& inputs);
  /// What ONNX's inference found for `node`'s outputs, or estimates (listed in `estimated_`).
  std::vector<tensor_facts> inferred_or_estimated(const onnx::NodeProto& node,
                                                  const std::vector<const tensor_facts*>& inputs);
  void settle(const onnx::NodeProto& node, std::vector<tensor_facts> outputs);

  std::map<std::string, tensor_facts> facts_;
  std::map<std::string, dims> inferred_; // ONNX's own, where it found every dim
  std::vector<std::string> estimated_;
};

} // namespace troupe::detail
