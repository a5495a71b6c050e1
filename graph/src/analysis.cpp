#include "troupe/graph/analysis.hpp"

#include "address_index.hpp"

#include <unordered_set>

namespace troupe::graph {

namespace {

node_set united(std::vector<node_set>& sets) {
  if (sets.empty())
    return {};
  // Grow the largest, so a chain costs the sum of its sets rather than their product.
  auto largest = std::max_element(sets.begin(), sets.end(),
                                  [](const auto& a, const auto& b) { return a.size() < b.size(); });
  node_set all = std::move(*largest);
  for (auto& s : sets)
    all.insert(s.begin(), s.end());
  return all;
}

} // namespace

node_set dependency_mapper::combine(const node_ptr& n, std::vector<node_set> children) {
  auto all = united(children);
  all.insert(n);
  return all;
}

node_set subset_dependency_mapper::combine(const node_ptr& n, std::vector<node_set> children) {
  auto all = united(children);
  if (universe_.contains(n))
    all.insert(n);
  return all;
}

node_set input_gatherer::combine(const node_ptr& n, std::vector<node_set> children) {
  auto all = united(children);
  if (is_input(*n))
    all.insert(n);
  return all;
}

namespace detail {

indexed_order index_order(const node_ptr& root) {
  // Iterative, so that a chain of a million nodes does not overflow the stack; the stack holds
  // addresses, and each node is copied (its count touched) once, into the order. A child's
  // position is known when it is met again or when its own frame ends, always before its
  // parent's next child: `known` collects them until the parent's frame ends.
  indexed_order out;
  struct frame {
    const node_ptr* n;
    std::size_t next;
    std::size_t known_from;
  };
  std::vector<frame> stack{{&root, 0, 0}};
  std::vector<std::uint32_t> known;
  out.index.insert(root.get(), address_index::absent);
  out.child_offsets.push_back(0);
  while (!stack.empty()) {
    auto& top = stack.back();
    const auto& children = (*top.n)->children();
    if (top.next < children.size()) {
      const auto& child = children[top.next++];
      // absent: met for the first time (a child met before has its position: in a DAG it is
      // never still on the stack).
      const auto seen = out.index.find_or_insert(child.get(), address_index::absent);
      if (seen != address_index::absent)
        known.push_back(seen);
      else
        stack.push_back({&child, 0, known.size()});
      continue;
    }
    const auto position = static_cast<std::uint32_t>(out.nodes.size());
    out.index.assign(top.n->get(), position);
    out.nodes.push_back(*top.n);
    out.child_positions.insert(out.child_positions.end(), known.begin() + top.known_from,
                               known.end());
    out.child_offsets.push_back(static_cast<std::uint32_t>(out.child_positions.size()));
    known.resize(top.known_from);
    stack.pop_back();
    if (!stack.empty())
      known.push_back(position);
  }
  return out;
}

} // namespace detail

std::vector<node_ptr> topological_order(const node_ptr& root) {
  return std::move(detail::index_order(root).nodes);
}

node_map<node_set> get_users(const node_ptr& root) {
  node_map<node_set> users;
  for (const auto& n : topological_order(root)) {
    users.try_emplace(n);
    for (const auto& child : n->children())
      users[child].insert(n);
  }
  return users;
}

node_set rec_get_user_nodes(const node_ptr& root, const node_ptr& n) {
  const auto users = get_users(root);
  node_set found;
  std::vector<node_ptr> frontier{n};
  while (!frontier.empty()) {
    auto at = users.find(frontier.back());
    frontier.pop_back();
    if (at == users.end())
      continue;
    for (const auto& user : at->second)
      if (found.insert(user).second)
        frontier.push_back(user);
  }
  return found;
}

node_ptr deduplicate(const node_ptr& root) {
  copy_mapper copy{false, false};
  return copy(root);
}

} // namespace troupe::graph
