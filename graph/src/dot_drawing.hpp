// How troupe draws a DAG in Graphviz's dot language: the drawing that get_dot_graph fills for a
// graph, a partition, or a distributed partition (graph_distributed).
#pragma once

#include "troupe/graph/analysis.hpp"
#include "troupe/graph/node.hpp"
#include "troupe/graph/partition.hpp"

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>

namespace troupe::graph::detail {

/// `text` in double quotes, its quotes and backslashes escaped.
std::string quoted(const std::string& text);

/// What a node's box says: its kind, name or peer, and shape.
std::string label(const node_ptr& n);

/// Names nodes "n0", "n1", ... in walk order, each instance once, and draws them.
class drawing {
public:
  /// The node's id, drawing it (and its subgraph) the first time; `indent` for clusters.
  std::string draw(const node_ptr& root, const std::string& indent) {
    for (const auto& n : topological_order(root)) {
      if (ids_.contains(n.get()))
        continue;
      const auto id = "n" + std::to_string(ids_.size());
      ids_[n.get()] = id;
      (is_input(*n) ? inputs_ : out_)
        << indent << id << " [label=" << quoted(label(n))
        << (is_input(*n) ? ", shape=ellipse" : ", shape=box") << "];\n";
      if (n->what() == kind::placeholder)
        placeholders_[n->name()] = id;
      for (const auto& child : n->children())
        edges_ << "  " << ids_.at(child.get()) << " -> " << id << ";\n";
    }
    return ids_.at(root.get());
  }

  /// The id of the placeholder drawn under `name`, if any.
  const std::string* placeholder(const std::string& name) const {
    auto at = placeholders_.find(name);
    return at == placeholders_.end() ? nullptr : &at->second;
  }

  /// Opens part `pid`'s dashed cluster and draws its outputs, each under a note with its name.
  void open_part(part_id pid, const std::set<std::string>& names,
                 const std::map<std::string, node_ptr>& results) {
    out_ << "  subgraph cluster_" << pid
         << " {\n    style=dashed;\n    label=" << quoted(std::to_string(pid)) << ";\n";
    for (const auto& name : names) {
      const auto id = draw(results.at(name), "    ");
      produced_[name] = id;
      out_ << "    " << quoted("out " + name) << " [shape=note];\n";
      edges_ << "  " << id << " -> " << quoted("out " + name) << ";\n";
    }
  }

  /// Links each output that fills a placeholder (drawn once, where it is read) to it.
  void link_outputs_to_placeholders() {
    for (const auto& [name, id] : produced_)
      if (const auto* read = placeholder(name))
        edges_ << "  " << quoted("out " + name) << " -> " << *read << " [style=dashed];\n";
  }

  std::ostringstream& body() { return out_; }
  std::ostringstream& edges() { return edges_; }

  std::string finish() {
    return "digraph computation {\n" + inputs_.str() + out_.str() + edges_.str() + "}\n";
  }

private:
  std::unordered_map<const node*, std::string> ids_;
  std::map<std::string, std::string> placeholders_;
  std::map<std::string, std::string> produced_; // output name: the id of its node
  std::ostringstream inputs_, out_, edges_;
};

} // namespace troupe::graph::detail
