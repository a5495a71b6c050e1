// Graphviz pictures of a DAG and of a partition, to see what was cut where, and the DAG as text:
//
//   std::ofstream{"dag.dot"} << troupe::graph::get_dot_graph(outputs);
//   std::ofstream{"parts.dot"} << troupe::graph::get_dot_graph(partition);   // dot -Tsvg parts.dot
#pragma once

#include "troupe/graph/partition.hpp"

#include <string>

namespace troupe::graph {

/// One box per node (its kind, and its name or operation, and shape), edges from each child to
/// its users; inputs once.
std::string get_dot_graph(const node_ptr& root);
/// The DAG as text for logs (pytato's get_ascii_graph): a line per node, children first, each
/// instance once, "#3 elementwise add (2, 3) <- #1, #2"; the outputs node lists its names.
std::string get_ascii_graph(const node_ptr& root);
/// The same per part, each in a dashed cluster "cluster_<pid>" labelled with its pid, with a
/// note per output; inputs, cut placeholders among them, are drawn once outside the parts, a
/// dashed edge from the output that fills each cut placeholder.
std::string get_dot_graph(const graph_partition& partition);

} // namespace troupe::graph
