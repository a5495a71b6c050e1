#include "troupe/graph/serialization.hpp"

#include "indexing.hpp"
#include "placeholder_names.hpp"
#include "troupe/graph/analysis.hpp"

#include <unordered_map>

#include <xtensor/xadapt.hpp>

namespace troupe::graph {

namespace {

node_record record_of(const node_ptr& n, const std::unordered_map<const node*, std::uint64_t>& at) {
  node_record r{n->what(), n->name(),  {}, n->shape(), n->type(),
                n->ints(), n->names(), {}, n->tags()};
  for (const auto& child : n->children())
    r.children.push_back(at.at(child.get()));
  if (n->data())
    r.data.assign(n->data()->begin(), n->data()->end());
  return r;
}

node_ptr built(const node_record& r, std::vector<node_ptr> c) {
  const auto one = [&]() -> node_ptr {
    if (c.size() != 1)
      throw invalid_argument(std::string{kind_name(r.what)} + " takes one child");
    return c[0];
  };
  const auto int_at = [&](std::size_t i) {
    if (i >= r.ints.size())
      throw invalid_argument(std::string{kind_name(r.what)} + " lacks an integer field");
    return r.ints[i];
  };
  switch (r.what) {
  case kind::placeholder: return detail::internal_placeholder(r.name, r.shape, r.type);
  case kind::size_param: return size_param(r.name);
  case kind::data: {
    std::size_t size = 1;
    for (auto d : r.shape)
      size *= static_cast<std::size_t>(d);
    if (size != r.data.size())
      throw invalid_argument("data of " + std::to_string(r.data.size()) +
                             " values for a shape of " + std::to_string(size));
    xt::xarray<double> values =
      xt::adapt(r.data, std::vector<std::size_t>(r.shape.begin(), r.shape.end()));
    return data(std::move(values), r.type);
  }
  case kind::elementwise: return elementwise(r.name, std::move(c));
  case kind::reduce: return reduce(one(), r.ints, r.name);
  case kind::stack: return stack(std::move(c), int_at(0));
  case kind::concatenate: return concatenate(std::move(c), int_at(0));
  case kind::reshape: return reshape(one(), r.shape);
  case kind::transpose: return transpose(one(), r.ints);
  case kind::roll: return roll(one(), int_at(0), int_at(1));
  case kind::einsum: return einsum(r.name, std::move(c));
  case kind::send: {
    if (c.size() != 2)
      throw invalid_argument("send takes two children");
    return staple_distributed_send(c[1], static_cast<int>(int_at(0)), r.name, c[0]);
  }
  case kind::index: return detail::index_from_ints(std::move(c), r.ints);
  case kind::recv:
    return make_distributed_recv(static_cast<int>(int_at(0)), r.name, r.shape, r.type);
  case kind::outputs: {
    if (r.names.size() != c.size())
      throw invalid_argument("outputs: names and children differ in number");
    std::map<std::string, node_ptr> named;
    for (std::size_t i = 0; i < c.size(); ++i)
      named.emplace(r.names[i], c[i]);
    return make_outputs(named);
  }
  }
  throw invalid_argument("unknown node kind " + std::to_string(static_cast<int>(r.what)));
}

} // namespace

std::vector<node_record> flatten(const std::vector<node_ptr>& roots,
                                 std::vector<std::uint64_t>& root_positions) {
  std::vector<node_record> table;
  std::unordered_map<const node*, std::uint64_t> at;
  root_positions.clear();
  for (const auto& root : roots) {
    for (const auto& n : topological_order(root))
      if (at.emplace(n.get(), table.size()).second)
        table.push_back(record_of(n, at));
    root_positions.push_back(at.at(root.get()));
  }
  return table;
}

std::vector<node_ptr> rebuild(const std::vector<node_record>& table) {
  std::vector<node_ptr> nodes;
  nodes.reserve(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto& r = table[i];
    std::vector<node_ptr> children;
    for (auto c : r.children) {
      if (c >= i)
        throw serialization_error("graph: node " + std::to_string(i) + " names child " +
                                  std::to_string(c) + ", which is not before it");
      children.push_back(nodes[c]);
    }
    try {
      auto n = built(r, std::move(children));
      for (const auto& tag : r.tags)
        n = n->with_tag(tag);
      nodes.push_back(std::move(n));
    } catch (const invalid_argument& e) {
      throw serialization_error("graph: node " + std::to_string(i) + " does not hold: " + e.what());
    }
  }
  return nodes;
}

} // namespace troupe::graph
