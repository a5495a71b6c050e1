// Cutting a DAG into parts that run in order (pytato's find_partition), and running them here.
//
//   auto p = troupe::graph::find_partition(outputs, [](const node_ptr& n) { return part_of(n); });
//   auto values = troupe::graph::execute_partition(p, inputs);          // on this thread
//
// Parts on pools: troupe/graph/pool_partition.hpp (troupe::graph_pools); across ranks:
// troupe/graph/distributed.hpp (troupe::graph_distributed).
//
// Where an edge crosses from a parent in one part to a child in another, the child is replaced in
// the parent's part by a placeholder "_pt_part_ph_<n>" (n zero-padded; one per child, shared by all
// its users in other parts), whose value var_name_to_result gives. Inputs (placeholders, size
// parameters, data) belong to no part: every part that reads one reads it directly. Parts are
// ordered by what they need, ties broken by their sorted output names, so the same DAG gives the
// same partition in every process.
#pragma once

#include "troupe/graph/evaluate.hpp"
#include "troupe/graph/node.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace troupe::graph {

using part_id = std::int64_t;

/// One part of a partition: the nodes that run together, what they read and what they produce
/// (pytato's GraphPart).
struct graph_part {
  /// Its id.
  part_id pid = 0;
  /// The parts that must run first.
  std::set<part_id> needed_pids;
  /// The graph's own placeholders (and size parameters) this part reads.
  std::set<std::string> user_input_names;
  /// The cut placeholders this part reads.
  std::set<std::string> partition_input_names;
  /// The graph's outputs this part computes, and the cut placeholders it produces.
  std::set<std::string> output_names;

  /// What it reads: the graph's placeholders and the cut placeholders.
  std::set<std::string> all_input_names() const;
};

/// A DAG cut into parts (pytato's GraphPartition): the parts, what each output computes, and an
/// order the parts run in.
struct graph_partition {
  /// The parts, by id.
  std::map<part_id, graph_part> parts;
  /// What each output name (the graph's, and each cut placeholder) computes, within its part.
  std::map<std::string, node_ptr> var_name_to_result;
  /// The parts' ids in an order each runs after those it needs.
  std::vector<part_id> toposorted_part_ids;
};

/// Cuts the DAG under `outputs` (a make_outputs node) by `part_of(node)`, asked once for every
/// node but inputs. partition_induced_cycle (naming the parts) if the parts depend on each
/// other in a circle.
graph_partition find_partition(const node_ptr& outputs,
                               const std::function<part_id(const node_ptr&)>& part_of);

/// Runs the parts in order on this thread: each gets the values of its input names, and adds its
/// outputs. Returns every value: the inputs, the cut placeholders and the outputs.
tensor_map execute_partition(const graph_partition& partition, tensor_map inputs);
} // namespace troupe::graph
