#include "troupe/graph/analysis.hpp"

#include "address_index.hpp"

#include <algorithm>
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
  // By position first, each node's users counted, so that every set and the map are made at
  // their size once: growing them as users turned up rehashed a million-node map and a million
  // sets over and over, a cache miss each.
  const auto order = detail::index_order(root);
  const auto count = order.nodes.size();
  std::vector<std::uint32_t> first_user(count + 1, 0);
  for (auto child : order.child_positions)
    ++first_user[child + 1];
  for (std::size_t i = 0; i < count; ++i)
    first_user[i + 1] += first_user[i];
  std::vector<std::uint32_t> user_positions(order.child_positions.size());
  auto next = first_user;
  for (std::uint32_t user = 0; user < count; ++user)
    for (auto child : order.children_of(user))
      user_positions[next[child]++] = user;
  node_map<node_set> users;
  users.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    node_set of_this(first_user[i + 1] - first_user[i]);
    for (auto at = first_user[i]; at < first_user[i + 1]; ++at)
      of_this.insert(order.nodes[user_positions[at]]);
    // Structurally equal nodes are one key, as with node_map anywhere: their users merge.
    if (auto [entry, added] = users.try_emplace(order.nodes[i], std::move(of_this)); !added)
      entry->second.insert(of_this.begin(), of_this.end());
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

node_set size_param_gatherer::combine(const node_ptr& n, std::vector<node_set> children) {
  auto all = united(children);
  if (n->what() == kind::size_param)
    all.insert(n);
  return all;
}

std::size_t get_num_nodes(const node_ptr& root, bool count_duplicates) {
  const auto order = topological_order(root);
  if (count_duplicates)
    return static_cast<std::size_t>(std::count_if(
      order.begin(), order.end(), [](const node_ptr& n) { return n->what() != kind::outputs; }));
  node_set distinct;
  for (const auto& n : order)
    if (n->what() != kind::outputs)
      distinct.insert(n);
  return distinct.size();
}

node_map<std::size_t> get_nusers(const node_ptr& root) {
  node_map<std::size_t> counts;
  for (const auto& n : topological_order(root)) { // each instance once, as pytato's by id
    counts.try_emplace(n, 0);
    for (const auto& child : n->children())
      ++counts[child];
  }
  return counts;
}

node_map<std::set<std::string>> tag_user_nodes(const node_map<node_set>& users,
                                               const std::string& tag,
                                               const node_ptr& starting_point,
                                               node_map<std::set<std::string>> node_to_tags) {
  std::vector<node_ptr> todo{starting_point};
  while (!todo.empty()) { // iterative: a chain of a million users needs no deep stack
    auto n = std::move(todo.back());
    todo.pop_back();
    if (!node_to_tags[n].insert(tag).second)
      continue; // reached before, and its users with it
    if (auto at = users.find(n); at != users.end())
      todo.insert(todo.end(), at->second.begin(), at->second.end());
  }
  return node_to_tags;
}

namespace {

class map_and_copy_mapper : public copy_mapper {
public:
  explicit map_and_copy_mapper(const std::function<node_ptr(const node_ptr&)>& map_fn)
    : map_fn_(map_fn) {}

  node_ptr rec(const node_ptr& n) override {
    if (auto at = mapped_.find(n); at != mapped_.end())
      return at->second;
    auto result = copy_mapper::rec(map_fn_(n));
    mapped_.emplace(n, result);
    return result;
  }

private:
  const std::function<node_ptr(const node_ptr&)>& map_fn_;
  node_map<node_ptr> mapped_; // by the node before map_fn
};

} // namespace

node_ptr map_and_copy(const node_ptr& root,
                      const std::function<node_ptr(const node_ptr&)>& map_fn) {
  if (!map_fn)
    throw invalid_argument("map_and_copy: no function");
  return map_and_copy_mapper{map_fn}(root);
}

} // namespace troupe::graph
