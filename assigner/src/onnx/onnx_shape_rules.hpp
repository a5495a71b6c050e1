// The shape (and, for small integer tensors, the value) of each operator's outputs from what is
// known of its inputs: one rule per operator family, after the ONNX specification.
#pragma once

#include "onnx_shapes.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::detail {

/// The outputs' facts of `node`, its inputs' facts given in order (null: an omitted optional
/// input, or one nothing is known of); nullopt when the rule cannot tell (or there is none).
std::optional<std::vector<tensor_facts>>
apply_shape_rule(const onnx::NodeProto& node, const std::vector<const tensor_facts*>& inputs);

/// Operator families, as the shape rules and the FLOP counts both need them (space-separated).
/// Element by element, one operation each, the output shaped as the first input.
inline constexpr std::string_view unary_elementwise_ops =
  "Relu LeakyRelu Sigmoid Tanh Gelu Erf Sqrt Exp Log Neg Abs Clip HardSigmoid HardSwish Elu Selu "
  "Celu Softplus Softsign Reciprocal Floor Ceil Round Sign Sin Cos Tan IsNaN IsInf Trilu CumSum "
  "Mish ThresholdedRelu Shrink";
/// Element by element over inputs broadcast as numpy's, one operation each.
inline constexpr std::string_view broadcasting_ops =
  "Add Sub Mul Div Pow Mod Max Min Sum Mean Equal Less Greater LessOrEqual GreaterOrEqual And Or "
  "Xor Not Where PRelu BitShift";
/// Normalisations and softmaxes: the input's shape, about five operations an element.
inline constexpr std::string_view normalizing_ops =
  "Softmax LogSoftmax Hardmax LayerNormalization BatchNormalization InstanceNormalization "
  "GroupNormalization LpNormalization LRN";
/// The words of such a list.
std::vector<std::string> operator_names(std::string_view list);

/// Attribute helpers shared with the FLOP counts.
std::int64_t int_attribute(const onnx::NodeProto& node, const std::string& name,
                           std::int64_t fallback);
std::optional<std::vector<std::int64_t>> ints_attribute(const onnx::NodeProto& node,
                                                        const std::string& name);

/// Elements of a shape.
double element_count(const dims& shape);

} // namespace troupe::detail
