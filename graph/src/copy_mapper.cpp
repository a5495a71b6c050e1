#include "troupe/graph/mapper.hpp"

namespace troupe::graph {

node_ptr copy_mapper::rec(const node_ptr& n) {
  auto result = cached_mapper::rec(n);
  if (auto at = made_.find(result); at != made_.end())
    return *at; // an equal result was made before: that instance
  if (err_on_created_duplicate_ && result != n && *result == *n) {
    bool same_children = true;
    for (std::size_t i = 0; i < n->children().size(); ++i)
      same_children = same_children && result->children()[i] == n->children()[i];
    if (same_children)
      throw created_duplicate(std::string{"no-op duplication: a new "} + kind_name(n->what()) +
                              " node equal to the one it replaces, with the same children");
  }
  made_.insert(result);
  return result;
}

node_ptr copy_mapper::copy(const node_ptr& n) {
  std::vector<node_ptr> children;
  bool changed = false;
  for (const auto& child : n->children()) {
    children.push_back(rec(child));
    changed = changed || children.back() != child;
  }
  return changed ? n->with_children(std::move(children)) : n;
}

} // namespace troupe::graph
