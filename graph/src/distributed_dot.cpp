// Pictures of a distributed partition: each part a cluster, its sends and receives as notes.
#include "troupe/graph/distributed.hpp"

#include "dot_drawing.hpp"

namespace troupe::graph {

std::string get_dot_graph(const distributed_graph_partition& partition) {
  detail::drawing d;
  for (auto pid : partition.toposorted_part_ids) {
    const auto& part = partition.parts.at(pid);
    d.open_part(pid, part.output_names, partition.name_to_output);
    for (const auto& [name, targets] : part.name_to_send_nodes)
      for (const auto& t : targets) {
        const auto send =
          detail::quoted("send " + name + " to rank " + std::to_string(t.dest) + ", tag " + t.tag);
        d.body() << "    " << send << " [shape=cds];\n";
        d.edges() << "  " << detail::quoted("out " + name) << " -> " << send << ";\n";
      }
    for (const auto& [name, info] : part.name_to_recv_node) {
      const auto recv = detail::quoted("recv " + name + " from rank " + std::to_string(info.src) +
                                       ", tag " + info.tag);
      d.body() << "    " << recv << " [shape=cds];\n";
      if (const auto* placeholder = d.placeholder(name))
        d.edges() << "  " << recv << " -> " << *placeholder << " [style=dashed];\n";
    }
    d.body() << "  }\n";
  }
  d.link_outputs_to_placeholders();
  return d.finish();
}

} // namespace troupe::graph
