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
  // Children by their positions in the order, never looked up by address: at a million nodes
  // each lookup is a cache miss.
  const auto count = order.nodes.size();
  std::vector<std::size_t> successors(count, 0);
  std::vector<std::uint32_t> readers(count, 0);
  std::vector<bool> is_output(count, false);
  for (std::uint32_t i = 0; i < count; ++i)
    for (auto at : order.children_of(i)) {
      ++readers[at];
      if (order.nodes[i]->what() == kind::outputs)
        is_output[at] = true;
      else
        ++successors[at];
    }
  // Each node's materialized predecessors, as positions; a materialized node stands for itself.
  // A node's list is freed once its last reader has read it.
  std::vector<std::vector<std::uint32_t>> materialized(count);
  std::vector<bool> chosen(count, false);
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto& n = order.nodes[i];
    std::vector<std::uint32_t> preds;
    for (auto at : order.children_of(i))
      preds.insert(preds.end(), materialized[at].begin(), materialized[at].end());
    for (auto at : order.children_of(i))
      if (--readers[at] == 0)
        std::vector<std::uint32_t>{}.swap(materialized[at]);
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
    const auto positions = order.children_of(i);
    for (std::size_t k = 0; k < positions.size(); ++k) {
      children.push_back(rewritten[positions[k]]);
      changed = changed || children.back() != n->children()[k];
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
