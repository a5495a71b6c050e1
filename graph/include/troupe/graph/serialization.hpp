// DAGs and partitions through troupe::serialize, so parts can go to pool workers and a partition
// can be compared byte for byte across processes.
//
//   auto bytes = troupe::serialize(partition);
//   auto back = troupe::deserialize<troupe::graph::graph_partition>(bytes);
//
// A DAG travels as a table of nodes, children before their users and each shared node once,
// in the order of a walk over the children (never of addresses), so equal DAGs give equal bytes.
// Reading rebuilds every node through its builder: bytes that name a child not yet read, or
// describe a node its builder refuses, are a serialization_error.
#pragma once

#include "troupe/actors/serialization.hpp"
#include "troupe/graph/partition.hpp"

#include <cereal/types/set.hpp>

#include <cstdint>
#include <vector>

namespace troupe::graph {

/// One node as it travels: its fields, and its children as positions in the table.
struct node_record {
  /// Its kind.
  kind what = kind::placeholder;
  /// Its name (inputs').
  std::string name;
  /// Its children: positions in the table.
  std::vector<std::uint64_t> children;
  /// Its shape.
  shape_t shape;
  /// Its element type.
  dtype type = dtype::float64;
  /// Its kind's integer arguments.
  std::vector<std::int64_t> ints;
  /// Its kind's names.
  std::vector<std::string> names;
  /// A data node's values.
  std::vector<double> data;
  /// Its tags.
  std::set<std::string> tags;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(what, name, children, shape, type, ints, names, data, tags);
  }
};

/// The table of the DAGs under `roots`, and where each root is in it.
std::vector<node_record> flatten(const std::vector<node_ptr>& roots,
                                 std::vector<std::uint64_t>& root_positions);
/// The nodes of a table, by position (serialization_error for one that does not hold).
std::vector<node_ptr> rebuild(const std::vector<node_record>& table);

template <class Archive>
void save(Archive& ar, const node_ptr& n) {
  std::vector<std::uint64_t> root;
  ar(flatten({n}, root), root);
}

template <class Archive>
void load(Archive& ar, node_ptr& n) {
  std::vector<node_record> table;
  std::vector<std::uint64_t> root;
  ar(table, root);
  const auto nodes = rebuild(table);
  if (root.size() != 1 || root[0] >= nodes.size())
    throw serialization_error("graph: the root is not in the table");
  n = nodes[root[0]];
}

template <class Archive>
void serialize(Archive& ar, graph_part& p) {
  ar(p.pid, p.needed_pids, p.user_input_names, p.partition_input_names, p.output_names);
}

template <class Archive>
void save(Archive& ar, const graph_partition& p) {
  std::vector<node_ptr> results;
  std::vector<std::string> names;
  for (const auto& [name, n] : p.var_name_to_result) {
    names.push_back(name);
    results.push_back(n);
  }
  std::vector<std::uint64_t> positions;
  auto table = flatten(results, positions); // one table: parts share nodes
  ar(p.parts, p.toposorted_part_ids, names, table, positions);
}

template <class Archive>
void load(Archive& ar, graph_partition& p) {
  std::vector<std::string> names;
  std::vector<node_record> table;
  std::vector<std::uint64_t> positions;
  ar(p.parts, p.toposorted_part_ids, names, table, positions);
  const auto nodes = rebuild(table);
  if (positions.size() != names.size())
    throw serialization_error("graph partition: names and results differ in number");
  p.var_name_to_result.clear();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (positions[i] >= nodes.size())
      throw serialization_error("graph partition: result '" + names[i] + "' is not in the table");
    p.var_name_to_result[names[i]] = nodes[positions[i]];
  }
}

} // namespace troupe::graph
