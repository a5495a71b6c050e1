// Which intermediate arrays to keep in memory (pytato's materialize_with_mpms, "multiple
// predecessors, multiple successors"), so that a computation neither recomputes shared work
// nor stores every temporary.
#pragma once

#include "troupe/graph/node.hpp"

namespace troupe::graph {

/// The tag materialize_with_mpms puts on the arrays it keeps (pytato's ImplStored).
inline const std::string stored_tag = "stored";

/// The DAG under `outputs` with `stored_tag` on every node that has more than one successor
/// (counted with multiplicity) and depends on more than one materialized array. Inputs, outputs
/// and nodes already tagged count as materialized; a node tagged stands for itself above it.
/// (Over-eager as pytato's: I1, I2 -> T -> O1, O2 stores T.)
node_ptr materialize_with_mpms(const node_ptr& outputs);

/// The inputs, the outputs (unless `include_outputs` is false) and the nodes tagged stored:
/// what a computation of `outputs` keeps, never its other intermediates.
node_set collect_materialized_nodes(const node_ptr& outputs, bool include_outputs = true);

} // namespace troupe::graph
