#include "troupe/graph/dot.hpp"

#include "dot_drawing.hpp"

#include "troupe/graph/analysis.hpp"

#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

namespace troupe::graph {

using detail::drawing;
using detail::label;

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
