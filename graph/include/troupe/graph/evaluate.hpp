// The reference interpreter: what a DAG computes, with xtensor, on this thread.
#pragma once

#include "troupe/graph/node.hpp"

#include <concepts>
#include <map>
#include <string>

namespace troupe::graph {

template <class T>
using basic_tensor_map = std::map<std::string, xt::xarray<T>>;
using tensor_map = basic_tensor_map<double>;

/// The values of an outputs node's results, given its placeholders and size parameters by
/// name. invalid_argument names an input that is missing or of another shape. Each value is
/// freed after its last use, and an element-wise operation or reshape whose operand is read by
/// nobody else computes into the operand's memory, so a chain of them allocates once. Nodes are
/// visited without recursion, so long chains are fine.
tensor_map evaluate(const node_ptr& outputs, const tensor_map& inputs);
/// The same in float: every operation computes in float, whatever dtype the nodes declare (data
/// nodes are rounded to float).
template <class T>
requires std::same_as<T, float> || std::same_as<T, double> basic_tensor_map<T>
evaluate(const node_ptr& outputs, const basic_tensor_map<T>& inputs);

/// The value of one node.
xt::xarray<double> evaluate_node(const node_ptr& n, const tensor_map& inputs);

} // namespace troupe::graph
