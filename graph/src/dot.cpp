#include "troupe/graph/dot.hpp"

#include "troupe/graph/distributed.hpp"

#include "troupe/graph/analysis.hpp"

#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

namespace troupe::graph {

namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + '"';
}

std::string label(const node_ptr& n) {
  std::string text = kind_name(n->what());
  if (n->what() == kind::send || n->what() == kind::recv)
    text += (n->what() == kind::send ? " to rank " : " from rank ") + std::to_string(n->ints()[0]) +
            ", tag " + n->name();
  else if (!n->name().empty())
    text += " " + n->name();
  if (n->what() != kind::outputs)
    text += " " + describe(n->shape());
  return text;
}

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

} // namespace

std::string get_dot_graph(const node_ptr& root) {
  drawing d;
  d.draw(root, "  ");
  return d.finish();
}

std::string get_dot_graph(const graph_partition& partition) {
  drawing d;
  for (auto pid : partition.toposorted_part_ids) {
    d.open_part(pid, partition.parts.at(pid).output_names, partition.var_name_to_result);
    d.body() << "  }\n";
  }
  d.link_outputs_to_placeholders();
  return d.finish();
}

std::string get_dot_graph(const distributed_graph_partition& partition) {
  drawing d;
  for (auto pid : partition.toposorted_part_ids) {
    const auto& part = partition.parts.at(pid);
    d.open_part(pid, part.output_names, partition.name_to_output);
    for (const auto& [name, targets] : part.name_to_send_nodes)
      for (const auto& t : targets) {
        const auto send =
          quoted("send " + name + " to rank " + std::to_string(t.dest) + ", tag " + t.tag);
        d.body() << "    " << send << " [shape=cds];\n";
        d.edges() << "  " << quoted("out " + name) << " -> " << send << ";\n";
      }
    for (const auto& [name, info] : part.name_to_recv_node) {
      const auto recv =
        quoted("recv " + name + " from rank " + std::to_string(info.src) + ", tag " + info.tag);
      d.body() << "    " << recv << " [shape=cds];\n";
      if (const auto* placeholder = d.placeholder(name))
        d.edges() << "  " << recv << " -> " << *placeholder << " [style=dashed];\n";
    }
    d.body() << "  }\n";
  }
  d.link_outputs_to_placeholders();
  return d.finish();
}

std::string get_ascii_graph(const node_ptr& root) {
  std::unordered_map<const node*, std::size_t> ids;
  std::ostringstream out;
  for (const auto& n : topological_order(root)) {
    const auto id = ids.emplace(n.get(), ids.size()).first->second;
    out << '#' << id << ' ' << label(n);
    if (n->what() == kind::outputs) {
      out << " [";
      for (std::size_t i = 0; i < n->names().size(); ++i)
        out << (i ? ", " : "") << n->names()[i];
      out << ']';
    }
    for (std::size_t i = 0; i < n->children().size(); ++i)
      out << (i ? ", #" : " <- #") << ids.at(n->children()[i].get());
    out << '\n';
  }
  return out.str();
}

} // namespace troupe::graph
