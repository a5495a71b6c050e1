// The reference interpreter: what a DAG computes, with xtensor, on this thread.
#pragma once

#include "troupe/graph/node.hpp"

#include <map>
#include <string>

namespace troupe::graph {

using tensor_map = std::map<std::string, xt::xarray<double>>;

/// The values of an outputs node's results, given its placeholders and size parameters by
/// name. invalid_argument names an input that is missing or of another shape. Each value is
/// freed after its last use, and nodes are visited without recursion, so long chains are fine.
tensor_map evaluate(const node_ptr& outputs, const tensor_map& inputs);
/// The value of one node.
xt::xarray<double> evaluate_node(const node_ptr& n, const tensor_map& inputs);

} // namespace troupe::graph
