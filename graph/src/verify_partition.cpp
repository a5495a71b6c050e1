// verify_distributed_partition: what every member holds, exchanged and checked alike on all.
#include "troupe/graph/distributed.hpp"

#include "troupe/actors/serialization.hpp"
#include "troupe/graph/errors.hpp"

#include "communications.hpp"

#include <cereal/types/map.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>

namespace troupe::graph {

namespace {

using detail::comm_id;
using detail::describe;

/// What a member tells the others of its partition, for verification.
struct part_summary {
  std::vector<std::pair<part_id, std::vector<part_id>>> parts; // pid, needed pids
  std::vector<std::pair<comm_id, part_id>> sends, recvs; // and the part each is in
  std::string problem; // a local one: every member then throws it
  template <class Archive>
  void serialize(Archive& ar) {
    ar(parts, sends, recvs, problem);
  }
};

/// This member's summary, and the first local problem (outputs, inputs) found.
part_summary summarize(const distributed_graph_partition& partition, int rank) {
  part_summary summary;
  std::map<std::string, part_id> made_by;
  std::set<std::string> received;
  for (auto pid : partition.toposorted_part_ids) {
    const auto& part = partition.parts.at(pid);
    summary.parts.emplace_back(
      pid, std::vector<part_id>(part.needed_pids.begin(), part.needed_pids.end()));
    for (const auto& [name, info] : part.name_to_recv_node) {
      received.insert(name);
      summary.recvs.emplace_back(comm_id{info.src, rank, info.tag}, pid);
    }
    for (const auto& name : part.partition_input_names)
      if (!received.contains(name) && !made_by.contains(name) && summary.problem.empty())
        summary.problem = "part " + std::to_string(pid) + " reads '" + name +
                          "', which no earlier part of this rank computes or receives";
    for (const auto& name : part.output_names) {
      if (received.contains(name) && summary.problem.empty())
        summary.problem = "'" + name + "' is both received and computed";
      if (!made_by.emplace(name, pid).second && summary.problem.empty())
        summary.problem = "'" + name + "' is computed by two parts";
    }
    for (const auto& [name, targets] : part.name_to_send_nodes)
      for (const auto& t : targets)
        summary.sends.emplace_back(comm_id{rank, t.dest, t.tag}, pid);
  }
  return summary;
}

/// Every (rank, part) with an edge to those that wait on it; partition_induced_cycle if they
/// wait in a circle.
void check_no_cycle(const std::vector<part_summary>& all,
                    const std::map<comm_id, std::pair<int, part_id>>& sender,
                    const std::map<comm_id, std::pair<int, part_id>>& receiver) {
  using vertex = std::pair<int, part_id>;
  std::map<vertex, std::vector<vertex>> waits_on_me;
  std::map<vertex, std::size_t> waiting;
  for (std::size_t r = 0; r < all.size(); ++r)
    for (const auto& [pid, needs] : all[r].parts) {
      waiting[{static_cast<int>(r), pid}] += needs.size();
      for (auto need : needs)
        waits_on_me[{static_cast<int>(r), need}].push_back({static_cast<int>(r), pid});
    }
  for (const auto& [id, from] : sender) {
    const auto& to = receiver.at(id);
    waits_on_me[from].push_back(to);
    ++waiting[to];
  }
  std::vector<vertex> ready;
  for (const auto& [v, count] : waiting)
    if (count == 0)
      ready.push_back(v);
  std::size_t done = 0;
  while (!ready.empty()) {
    const auto v = ready.back();
    ready.pop_back();
    ++done;
    for (const auto& next : waits_on_me[v])
      if (--waiting[next] == 0)
        ready.push_back(next);
  }
  if (done != waiting.size())
    throw partition_induced_cycle("verify_distributed_partition: the parts of the ranks wait on "
                                  "each other in a circle");
}

} // namespace

void verify_distributed_partition(collective_group& group,
                                  const distributed_graph_partition& partition) {
  const auto everyone =
    detail::all_gather_bytes(group, serialize(summarize(partition, group.rank())));
  std::vector<part_summary> all;
  for (const auto& bytes : everyone)
    all.push_back(deserialize<part_summary>(bytes));
  std::map<comm_id, std::pair<int, part_id>> sender, receiver;
  for (std::size_t r = 0; r < all.size(); ++r) {
    const auto rank = static_cast<int>(r);
    if (!all[r].problem.empty())
      throw invalid_argument("verify_distributed_partition: rank " + std::to_string(r) + ": " +
                             all[r].problem);
    for (const auto& [id, pid] : all[r].sends)
      if (!sender.emplace(id, std::pair{rank, pid}).second)
        throw duplicate_send("verify_distributed_partition: two sends " + describe(id));
    for (const auto& [id, pid] : all[r].recvs)
      if (!receiver.emplace(id, std::pair{rank, pid}).second)
        throw duplicate_recv("verify_distributed_partition: two receives " + describe(id));
  }
  for (const auto& [id, at] : receiver)
    if (!sender.contains(id))
      throw missing_send("verify_distributed_partition: no rank sends " + describe(id));
  for (const auto& [id, at] : sender)
    if (!receiver.contains(id))
      throw missing_recv("verify_distributed_partition: no rank receives " + describe(id));
  check_no_cycle(all, sender, receiver);
}

} // namespace troupe::graph
