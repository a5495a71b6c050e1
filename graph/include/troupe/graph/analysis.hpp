// What a DAG holds and how its nodes depend on each other.
#pragma once

#include "troupe/graph/mapper.hpp"

#include <functional>
#include <set>
#include <string>
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
  /// A mapper that keeps to the nodes of `universe`.
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

/// The size parameters `root` reaches (pytato's SizeParamGatherer).
class size_param_gatherer : public combine_mapper<node_set> {
protected:
  node_set combine(const node_ptr& n, std::vector<node_set> children) override;
};

/// How many nodes `root` reaches, the outputs node aside; equal nodes count once unless
/// `count_duplicates` (then each instance counts) (pytato's get_num_nodes).
std::size_t get_num_nodes(const node_ptr& root, bool count_duplicates = false);
/// How many uses each node has: each instance of a user counts, and a user reading it twice
/// counts twice (pytato's get_nusers).
node_map<std::size_t> get_nusers(const node_ptr& root);
/// `tag` added, in `node_to_tags`, to `starting_point` and every node that uses it, directly or
/// not, by `users` (get_users; pytato's tag_user_nodes). Returns the map.
node_map<std::set<std::string>> tag_user_nodes(const node_map<node_set>& users,
                                               const std::string& tag,
                                               const node_ptr& starting_point,
                                               node_map<std::set<std::string>> node_to_tags = {});
/// A copy of `root` whose every node is first mapped by `map_fn`, then copied with its
/// children mapped the same way (pytato's map_and_copy); each distinct node mapped once.
node_ptr map_and_copy(const node_ptr& root, const std::function<node_ptr(const node_ptr&)>& map_fn);

} // namespace troupe::graph
