// The FLOPs of one ONNX operator, by the table in troupe/assigner/onnx_model.hpp.
#pragma once

#include "onnx_shapes.hpp"

#include <set>
#include <string>

namespace troupe::detail {

/// `node`'s FLOPs, its subgraphs' included (a Loop's times its trip count, a Scan's times its
/// length); an operator the table does not know counts its output elements and its type goes
/// into `unknown`.
double flops_of(const onnx::NodeProto& node, const shape_table& shapes,
                std::set<std::string>& unknown);

} // namespace troupe::detail
