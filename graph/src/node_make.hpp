// How the builders make a node once they have checked its operands (node.cpp, indexing.cpp).
#pragma once

#include "troupe/graph/node.hpp"

#include <memory>
#include <string>
#include <vector>

namespace troupe::graph::detail {

node_ptr make(kind what, std::string name, std::vector<node_ptr> children, shape_t shape,
              dtype type, std::vector<std::int64_t> ints = {}, std::vector<std::string> names = {},
              std::shared_ptr<const xt::xarray<double>> values = nullptr);

} // namespace troupe::graph::detail
