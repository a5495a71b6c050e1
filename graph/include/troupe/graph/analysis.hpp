// What a DAG holds and how its nodes depend on each other.
#pragma once

#include "troupe/graph/mapper.hpp"

#include <vector>

namespace troupe::graph {

/// Every node `n` reaches, `n` included (pytato's DependencyMapper).
class dependency_mapper : public combine_mapper<node_set> {
protected:
  node_set combine(const node_ptr& n, std::vector<node_set> children) override;
};

/// The same, kept to `universe`.
class subset_dependency_mapper : public combine_mapper<node_set> {
public:
  explicit subset_dependency_mapper(node_set universe) : universe_(std::move(universe)) {}

protected:
  node_set combine(const node_ptr& n, std::vector<node_set> children) override;

private:
  node_set universe_;
};

/// The inputs `n` reaches: placeholders, data and size parameters.
class input_gatherer : public combine_mapper<node_set> {
protected:
  node_set combine(const node_ptr& n, std::vector<node_set> children) override;
};

/// Post-order (children first) of the nodes reached, each instance once (keyed by address, as
/// pytato's TopoSortMapper is by id()).
std::vector<node_ptr> topological_order(const node_ptr& root);

/// The nodes that use each node directly (every node reached has an entry). Linear time.
node_map<node_set> get_users(const node_ptr& root);
/// Every node that uses `n`, directly or not. Linear time.
node_set rec_get_user_nodes(const node_ptr& root, const node_ptr& n);

/// The DAG with equal nodes made one instance (a copy_mapper).
node_ptr deduplicate(const node_ptr& root);

} // namespace troupe::graph
