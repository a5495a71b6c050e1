// A DAG split across the ranks of a collective group (pytato's distributed partition): each
// rank builds its own DAG, with receives (make_distributed_recv) and sends stapled to values
// (staple_distributed_send) that match across ranks; find_distributed_partition cuts each
// rank's DAG into parts that run in order, sending what each part produces and receiving what
// the next needs, and execute_distributed_partition runs them.
//
//   auto x = placeholder("x", {4});
//   auto halo = make_distributed_recv(right, "halo", {4});
//   auto y = staple_distributed_send(x, left, "halo", x + halo);
//   auto p = find_distributed_partition(*group, make_outputs({{"y", y}}));   // collective
//   auto out = execute_distributed_partition(p, *group, {{"x", xs}});       // collective
//
// Each communication is (source rank, destination rank, tag). A send waits for the receives its
// data depends on; the communications fall into levels (a send's level is one more than the
// highest of those receives'), computed alike on every rank from what all ranks exchange. Part
// k computes this rank's sends of level k; the last part computes the outputs. A receive of
// level k is an input of the parts after k. Kept arrays (sent, outputs, and those
// materialize_with_mpms chooses) are computed once, in the earliest part with a send that needs
// them (else the last), and read by later parts; other intermediates are recomputed in each
// part that needs them. Errors, on every rank alike: duplicate_send and duplicate_recv
// (one id twice on this rank), missing_send and missing_recv (no partner on any rank),
// cycle_error (sends that wait on each other's receives), not_supported (a rank sending to
// itself).
#pragma once

#include "troupe/collectives/collective_group.hpp"
#include "troupe/graph/partition.hpp"

namespace troupe::graph {

/// What a part receives under a placeholder: from which rank, under which tag, of which shape.
struct recv_info {
  /// The rank that sends it.
  int src = 0;
  /// The tag the send and the receive name.
  std::string tag;
  std::int64_t int_tag = 0; ///< the tag on the wire
  /// The array's shape.
  shape_t shape;
};

/// Where a part's computed array is sent: which rank, under which tag.
struct send_info {
  /// The rank it goes to.
  int dest = 0;
  /// The tag the send and the receive name.
  std::string tag;
  /// The tag on the wire.
  std::int64_t int_tag = 0;
};

/// A part of a distributed partition: a graph_part with the receives it reads and the sends of what
/// it computes.
struct distributed_graph_part : graph_part {
  /// The receives this part is the first to read: placeholder name, what arrives there.
  std::map<std::string, recv_info> name_to_recv_node;
  /// The sends of what this part computes: output name, where it goes (one array may go to
  /// several ranks).
  std::map<std::string, std::vector<send_info>> name_to_send_nodes;
};

/// The distributed partition of one rank's DAG (pytato's DistributedGraphPartition): its parts, in
/// an order that runs, with their sends and receives.
struct distributed_graph_partition {
  /// The parts, by id.
  std::map<part_id, distributed_graph_part> parts;
  /// The parts' ids in an order each runs after those it reads.
  std::vector<part_id> toposorted_part_ids;
  /// What each output name (sent arrays, overall outputs) computes within its part.
  std::map<std::string, node_ptr> name_to_output;
  /// The names of the DAG's own outputs (not the sent arrays).
  std::vector<std::string> overall_output_names;
  /// Tags on the wire are 0 .. tag_count - 1, in sorted order of the tags of all ranks.
  std::int64_t tag_count = 0;
};

/// Collective over `group`: every member calls it with its own DAG.
distributed_graph_partition find_distributed_partition(collective_group& group,
                                                       const node_ptr& outputs);

/// Collective over `group`: checks the partition every member holds (pytato's
/// verify_distributed_partition), throwing the same error on every member: invalid_argument for
/// an output two parts compute, or a part input nothing on this rank provides; duplicate_send,
/// duplicate_recv, missing_send, missing_recv across the ranks; partition_induced_cycle when the
/// parts of all ranks, linked by their sends, wait on each other in a circle.
void verify_distributed_partition(collective_group& group,
                                  const distributed_graph_partition& partition);

/// The same partition with wire tags from `base` up, and the first tag after them (pytato's
/// number_distributed_tags, numbering every rank's tags alike).
std::pair<distributed_graph_partition, std::int64_t>
number_distributed_tags(distributed_graph_partition partition, std::int64_t base);

/// Collective over `group`: posts every receive first, runs the parts in order, sending each
/// part's results as it finishes, frees each value (the inputs too: move them in to spare a
/// copy) after the last part that reads it and each sent array once its send is done, and
/// returns the overall outputs.
tensor_map execute_distributed_partition(const distributed_graph_partition& partition,
                                         collective_group& group, tensor_map inputs);

/// A Graphviz picture of this rank's parts: a dashed cluster per part, its outputs, the sends
/// each starts and the receives it reads, labelled with their ranks and tags.
std::string get_dot_graph(const distributed_graph_partition& partition);

} // namespace troupe::graph
