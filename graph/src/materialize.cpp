#include "troupe/graph/materialize.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/graph/analysis.hpp"

#include "address_index.hpp"

#include <algorithm>

namespace troupe::graph {

namespace {

void require_outputs(const node_ptr& outputs, const char* what) {
  if (!outputs || outputs->what() != kind::outputs)
    throw invalid_argument(std::string{what} + ": give the outputs node (make_outputs)");
}

} // namespace

namespace detail {

std::vector<bool> mpms_choice(const indexed_order& order) {
  const auto count = order.nodes.size();
  std::vector<std::size_t> successors(count, 0);
  std::vector<bool> is_output(count, false);
  for (const auto& n : order.nodes)
    for (const auto& child : n->children()) {
      const auto at = order.index.find(child.get());
      if (n->what() == kind::outputs)
        is_output[at] = true;
      else
        ++successors[at];
    }
  // Each node's materialized predecessors, as positions; a materialized node stands for itself.
  std::vector<std::vector<std::uint32_t>> materialized(count);
  std::vector<bool> chosen(count, false);
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto& n = order.nodes[i];
    std::vector<std::uint32_t> preds;
    for (const auto& child : n->children()) {
      const auto& more = materialized[order.index.find(child.get())];
      preds.insert(preds.end(), more.begin(), more.end());
    }
    std::sort(preds.begin(), preds.end());
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    const bool stored = is_input(*n) || is_output[i] || n->tags().contains(stored_tag);
    chosen[i] = !stored && n->what() != kind::outputs && successors[i] > 1 && preds.size() > 1;
    materialized[i] = chosen[i] || stored ? std::vector<std::uint32_t>{i} : std::move(preds);
  }
  return chosen;
}

} // namespace detail

node_ptr materialize_with_mpms(const node_ptr& outputs) {
  require_outputs(outputs, "materialize_with_mpms");
  const auto order = detail::index_order(outputs);
  const auto chosen = detail::mpms_choice(order);
  std::vector<node_ptr> rewritten(order.nodes.size());
  for (std::size_t i = 0; i < order.nodes.size(); ++i) {
    const auto& n = order.nodes[i];
    std::vector<node_ptr> children;
    bool changed = false;
    for (const auto& child : n->children()) {
      children.push_back(rewritten[order.index.find(child.get())]);
      changed = changed || children.back() != child;
    }
    auto result = changed ? n->with_children(std::move(children)) : n;
    rewritten[i] = chosen[i] ? result->with_tag(stored_tag) : std::move(result);
  }
  return rewritten.back(); // the outputs node comes last: it is the root
}

node_set collect_materialized_nodes(const node_ptr& outputs, bool include_outputs) {
  require_outputs(outputs, "collect_materialized_nodes");
  node_set kept;
  for (const auto& n : topological_order(outputs))
    if (is_input(*n) || n->tags().contains(stored_tag))
      kept.insert(n);
  if (include_outputs)
    for (const auto& child : outputs->children())
      kept.insert(child);
  return kept;
}

} // namespace troupe::graph
