// The shape (and, for small integer tensors, the value) of each operator's outputs from what is
// known of its inputs: one rule per operator family, after the ONNX specification.
#pragma once

#include "onnx_shapes.hpp"

#include <optional>
#include <vector>

namespace troupe::detail {

/// The outputs' facts of `node`, its inputs' facts given in order (null: an omitted optional
/// input, or one nothing is known of); nullopt when the rule cannot tell (or there is none).
std::optional<std::vector<tensor_facts>>
apply_shape_rule(const onnx::NodeProto& node, const std::vector<const tensor_facts*>& inputs);

/// Attribute helpers shared with the FLOP counts.
std::int64_t int_attribute(const onnx::NodeProto& node, const std::string& name,
                           std::int64_t fallback);
std::optional<std::vector<std::int64_t>> ints_attribute(const onnx::NodeProto& node,
                                                        const std::string& name);

/// Elements of a shape.
double element_count(const dims& shape);

} // namespace troupe::detail
