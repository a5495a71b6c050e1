// execute_distributed_partition: receives posted first, each part run when its inputs are in,
// its sends started as it finishes.
#include "troupe/graph/distributed.hpp"

#include <list>
#include <optional>
#include <set>

namespace troupe::graph {

namespace {

/// A receive posted up front: its buffer and the handle of the message coming into it.
struct incoming {
  xt::xarray<double> buffer;
  std::optional<recv_handle> handle;
};

/// Waits for every message still on its way, ignoring how each ends: their buffers must live
/// until then, and each ends within the group's timeout.
void settle(std::vector<collective_handle>& sends, std::map<std::string, incoming>& receives) {
  for (auto& send : sends)
    try {
      send.wait();
    } catch (...) {
    }
  for (auto& [name, r] : receives)
    try {
      r.handle->wait();
    } catch (...) {
    }
}

} // namespace

tensor_map execute_distributed_partition(const distributed_graph_partition& partition,
                                         collective_group& group, const tensor_map& inputs) {
  std::map<std::string, incoming> receives; // nodes of a map stay where they are
  std::list<xt::xarray<double>> outgoing; // alive until their sends are done
  std::vector<collective_handle> sends;
  tensor_map context = inputs;
  try {
    for (const auto& [pid, part] : partition.parts)
      for (const auto& [name, info] : part.name_to_recv_node) {
        auto& r = receives[name];
        r.buffer =
          xt::zeros<double>(std::vector<std::size_t>(info.shape.begin(), info.shape.end()));
        r.handle.emplace(group.irecv(r.buffer, info.src, static_cast<int>(info.int_tag)));
      }
    // Each value goes once the last part that reads it has run (outputs stay).
    std::map<std::string, part_id> last_reader;
    for (auto pid : partition.toposorted_part_ids)
      for (const auto& name : partition.parts.at(pid).all_input_names())
        last_reader[name] = pid;
    const std::set<std::string> kept(partition.overall_output_names.begin(),
                                     partition.overall_output_names.end());
    for (auto pid : partition.toposorted_part_ids) {
      const auto& part = partition.parts.at(pid);
      for (const auto& name : part.partition_input_names)
        if (auto at = receives.find(name); at != receives.end() && !context.contains(name)) {
          at->second.handle->wait();
          context.emplace(name, at->second.buffer);
        }
      std::map<std::string, node_ptr> named;
      for (const auto& name : part.output_names)
        named.emplace(name, partition.name_to_output.at(name));
      tensor_map part_inputs;
      for (const auto& name : part.all_input_names())
        if (auto at = context.find(name); at != context.end())
          part_inputs.emplace(name, at->second);
      for (auto& [name, value] : evaluate(make_outputs(named), part_inputs))
        context.insert_or_assign(name, std::move(value));
      for (const auto& [name, targets] : part.name_to_send_nodes)
        for (const auto& target : targets) {
          outgoing.push_back(context.at(name));
          sends.push_back(
            group.isend(outgoing.back(), target.dest, static_cast<int>(target.int_tag)));
        }
      for (const auto& name : part.all_input_names())
        if (last_reader.at(name) == pid && !kept.contains(name))
          context.erase(name);
    }
    for (auto& send : sends)
      send.wait();
    for (auto& [name, r] : receives)
      r.handle->wait(); // a receive no part read still ends here
  } catch (...) {
    settle(sends, receives); // a part failed, or a message: the others still use the buffers
    throw;
  }
  tensor_map results;
  for (const auto& name : partition.overall_output_names)
    results.emplace(name, context.at(name));
  return results;
}

} // namespace troupe::graph
