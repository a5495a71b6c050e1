#include "troupe/graph/distributed.hpp"

#include "troupe/actors/serialization.hpp"
#include "troupe/graph/analysis.hpp"
#include "troupe/graph/errors.hpp"

#include "address_index.hpp"
#include "batches.hpp"

#include <cereal/types/map.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>

#include <algorithm>
#include <list>
#include <optional>
#include <span>

namespace troupe::graph {

namespace {

/// One communication: who sends, who receives, under which tag.
struct comm_id {
  int src = 0, dest = 0;
  std::string tag;
  auto operator<=>(const comm_id&) const = default;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(src, dest, tag);
  }
};

std::string describe(const comm_id& id) {
  return "(from rank " + std::to_string(id.src) + " to rank " + std::to_string(id.dest) +
         ", tag '" + id.tag + "')";
}

enum class failure : std::uint8_t { none, not_supported, duplicate_send, duplicate_recv };

/// What a rank tells the others: its sends (each with the receives its data needs), its
/// receives, or why it cannot go on.
struct local_comms {
  std::map<comm_id, std::vector<comm_id>> sends;
  std::vector<comm_id> recvs;
  failure why = failure::none;
  std::string text;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(sends, recvs, why, text);
  }
};

/// This rank's sends and receives in `order`, with their nodes.
struct found_comms {
  local_comms info;
  std::map<comm_id, node_ptr> send_nodes, recv_nodes;
};

found_comms find_comms(const std::vector<node_ptr>& order, const detail::address_index& index,
                       int rank) {
  found_comms found;
  auto& info = found.info;
  // The receives each node depends on, as sorted ids.
  std::vector<std::vector<comm_id>> needs(order.size());
  for (std::size_t i = 0; i < order.size() && info.why == failure::none; ++i) {
    const auto& n = order[i];
    for (const auto& child : n->children()) {
      const auto& more = needs[index.find(child.get())];
      needs[i].insert(needs[i].end(), more.begin(), more.end());
    }
    if (n->what() == kind::recv) {
      const comm_id id{static_cast<int>(n->ints()[0]), rank, n->name()};
      needs[i].push_back(id);
      const auto [at, fresh] = found.recv_nodes.emplace(id, n);
      if (id.src == rank)
        info = {{}, {}, failure::not_supported, "a receive from this rank itself " + describe(id)};
      else if (!fresh && !(*at->second == *n))
        info = {{}, {}, failure::duplicate_recv, "two receives " + describe(id)};
    }
    std::sort(needs[i].begin(), needs[i].end());
    needs[i].erase(std::unique(needs[i].begin(), needs[i].end()), needs[i].end());
    if (n->what() == kind::send && info.why == failure::none) {
      const comm_id id{rank, static_cast<int>(n->ints()[0]), n->name()};
      const auto [at, fresh] = found.send_nodes.emplace(id, n);
      if (id.dest == rank)
        info = {{}, {}, failure::not_supported, "a send to this rank itself " + describe(id)};
      else if (!fresh && !(*at->second == *n))
        info = {{}, {}, failure::duplicate_send, "two sends " + describe(id)};
      else
        info.sends[id] = needs[index.find(n->children()[1].get())];
    }
  }
  if (info.why == failure::none)
    for (const auto& [id, n] : found.recv_nodes)
      info.recvs.push_back(id);
  return found;
}

/// Every member's bytes, over the group (two all_gathers: the sizes, then the padded bytes).
std::vector<std::vector<std::byte>> all_gather_bytes(collective_group& group,
                                                     const std::vector<std::byte>& mine) {
  const auto members = static_cast<std::size_t>(group.size());
  std::vector<std::vector<std::int64_t>> sizes(members, std::vector<std::int64_t>(1));
  group.all_gather(sizes, std::vector<std::int64_t>{static_cast<std::int64_t>(mine.size())});
  std::size_t longest = 0;
  for (const auto& s : sizes)
    longest = std::max(longest, static_cast<std::size_t>(s[0]));
  std::vector<std::uint8_t> padded(longest);
  std::transform(mine.begin(), mine.end(), padded.begin(),
                 [](std::byte b) { return static_cast<std::uint8_t>(b); });
  std::vector<std::vector<std::uint8_t>> all(members, std::vector<std::uint8_t>(longest));
  group.all_gather(all, padded);
  std::vector<std::vector<std::byte>> out(members);
  for (std::size_t r = 0; r < members; ++r)
    std::transform(all[r].begin(), all[r].begin() + sizes[r][0], std::back_inserter(out[r]),
                   [](std::uint8_t b) { return static_cast<std::byte>(b); });
  return out;
}

[[noreturn]] void rethrow_remote(int rank, failure why, const std::string& text) {
  const auto message = "find_distributed_partition: rank " + std::to_string(rank) + ": " + text;
  switch (why) {
  case failure::not_supported: throw not_supported(message);
  case failure::duplicate_send: throw duplicate_send(message);
  case failure::duplicate_recv: throw duplicate_recv(message);
  case failure::none: break;
  }
  throw invalid_argument(message);
}

/// Every communication's level: 0 for a send that needs no receive, else one more than the
/// highest level of the receives it needs. cycle_error if sends wait on each other.
std::map<comm_id, int> levels_of(const std::map<comm_id, std::vector<comm_id>>& sends) {
  try {
    return detail::batch_levels<comm_id>(sends, [](const comm_id& id) { return describe(id); });
  } catch (const cycle_error& e) {
    throw cycle_error(std::string{"find_distributed_partition: the sends wait on each other's "
                                  "receives: "} +
                      e.what());
  }
}

/// Builds this rank's parts once every rank's communications are known.
class distributed_partitioner {
public:
  distributed_partitioner(const node_ptr& outputs, int rank) : rank_(rank) {
    order_ = detail::index_order(outputs);
  }

  distributed_graph_partition run(collective_group& group) {
    auto found = find_comms(order_.nodes, order_.index, rank_);
    const auto everyone = all_gather_bytes(group, serialize(found.info));
    std::map<comm_id, std::vector<comm_id>> sends;
    std::set<comm_id> recvs;
    std::set<std::string> tags;
    for (std::size_t r = 0; r < everyone.size(); ++r) {
      const auto info = deserialize<local_comms>(everyone[r]);
      if (info.why != failure::none)
        rethrow_remote(static_cast<int>(r), info.why, info.text);
      for (const auto& [id, needs] : info.sends) {
        sends[id] = needs;
        tags.insert(id.tag);
      }
      for (const auto& id : info.recvs) {
        recvs.insert(id);
        tags.insert(id.tag);
      }
    }
    check_partners(sends, recvs);
    const auto level = levels_of(sends);
    std::map<std::string, std::int64_t> wire_tag;
    for (const auto& tag : tags)
      wire_tag.emplace(tag, static_cast<std::int64_t>(wire_tag.size()));
    result_.tag_count = static_cast<std::int64_t>(tags.size());
    build_parts(found, level, wire_tag);
    return std::move(result_);
  }

private:
  static void check_partners(const std::map<comm_id, std::vector<comm_id>>& sends,
                             const std::set<comm_id>& recvs) {
    for (const auto& id : recvs)
      if (!sends.contains(id))
        throw missing_send("find_distributed_partition: no rank sends " + describe(id));
    for (const auto& [id, needs] : sends)
      if (!recvs.contains(id))
        throw missing_recv("find_distributed_partition: no rank receives " + describe(id));
  }

  /// Where each kept array is computed, and the parts: see build_parts.
  void build_parts(const found_comms& found, const std::map<comm_id, int>& level,
                   const std::map<std::string, std::int64_t>& wire_tag) {
    int highest = -1;
    for (const auto& [id, n] : found.send_nodes)
      highest = std::max(highest, level.at(id));
    for (const auto& [id, n] : found.recv_nodes)
      highest = std::max(highest, level.at(id));
    last_ = highest + 1;
    name_receives(found, wire_tag);
    place_stored(found, level);
    // Part k computes the sends of level k; the last part the outputs.
    std::map<std::uint32_t, std::string> sent_names;
    for (const auto& [id, n] : found.send_nodes) {
      const auto data = order_.index.find(n->children()[1].get());
      auto [at, fresh] = sent_names.emplace(data, "");
      if (fresh)
        at->second = "_pt_dist_send_" + std::to_string(sent_names.size() - 1);
      auto& part = part_at(level.at(id));
      part.output_names.insert(at->second);
      part.name_to_send_nodes[at->second].push_back({id.dest, id.tag, wire_tag.at(id.tag)});
      wanted_[level.at(id)].emplace_back(at->second, data);
    }
    const auto& root = order_.nodes.back();
    for (std::size_t i = 0; i < root->children().size(); ++i) {
      part_at(last_).output_names.insert(root->names()[i]);
      wanted_[last_].emplace_back(root->names()[i], order_.index.find(root->children()[i].get()));
      result_.overall_output_names.push_back(root->names()[i]);
    }
    // Later parts first: a part that reads a kept array computed earlier tells that part to
    // output it (pytato's promotion), before that part is built.
    for (part_id pid = last_; pid >= 0; --pid)
      if (result_.parts.contains(pid) || wanted_.contains(pid))
        build_part(pid);
    part_id previous = -1;
    for (auto& [pid, part] : result_.parts) {
      result_.toposorted_part_ids.push_back(pid);
      if (previous >= 0)
        part.needed_pids.insert(previous);
      previous = pid;
    }
    for (const auto& [name, info] : receives_) {
      const auto& id_level = level.at(comm_id{info.src, rank_, info.tag});
      result_.parts.upper_bound(id_level)->second.name_to_recv_node.emplace(name, info);
    }
  }

  /// Receives become placeholders "_pt_dist_<n>", in the order of their ids.
  void name_receives(const found_comms& found,
                     const std::map<std::string, std::int64_t>& wire_tag) {
    for (const auto& [id, n] : found.recv_nodes) {
      const auto name = "_pt_dist_" + std::to_string(receives_.size());
      receives_.emplace(name, recv_info{id.src, id.tag, wire_tag.at(id.tag), n->shape()});
      recv_placeholder_[order_.index.find(n.get())] = placeholder(name, n->shape(), n->type());
    }
    // Structurally equal receives are one: each takes the placeholder of the one kept.
    for (std::uint32_t i = 0; i < order_.nodes.size(); ++i) {
      const auto& n = order_.nodes[i];
      if (n->what() == kind::recv && !recv_placeholder_.contains(i)) {
        const comm_id id{static_cast<int>(n->ints()[0]), rank_, n->name()};
        recv_placeholder_[i] =
          recv_placeholder_.at(order_.index.find(found.recv_nodes.at(id).get()));
      }
    }
  }

  /// Kept arrays (sent, output, or chosen by materialize_with_mpms) are computed once, in the
  /// earliest part with a send that needs them, else the last part.
  void place_stored(const found_comms& found, const std::map<comm_id, int>& level) {
    const auto count = order_.nodes.size();
    stored_ = detail::mpms_choice(order_);
    for (const auto& [id, n] : found.send_nodes)
      stored_[order_.index.find(n->children()[1].get())] = true;
    for (const auto& child : order_.nodes.back()->children())
      stored_[order_.index.find(child.get())] = true;
    home_.assign(count, last_);
    std::vector<std::pair<int, const node_ptr*>> by_level;
    for (const auto& [id, n] : found.send_nodes)
      by_level.emplace_back(level.at(id), &n->children()[1]);
    std::sort(by_level.begin(), by_level.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<char> placed(count, 0);
    for (const auto& [send_level, data] : by_level)
      for (const auto& n : topological_order(*data)) {
        const auto at = order_.index.find(n.get());
        if (stored_[at] && !placed[at]) {
          home_[at] = send_level; // the lowest level first, so the earliest part wins
          placed[at] = 1;
        }
      }
  }

  /// Builds part `pid`'s outputs: every wanted array, its kept inputs from earlier parts read
  /// as placeholders (and asked of their parts), receives as theirs, sends as their values.
  void build_part(part_id pid) {
    auto& part = part_at(pid);
    std::map<std::uint32_t, node_ptr> made; // by position, this part's view
    const auto view = [&](std::uint32_t root) { return rewrite_in_part(root, pid, made); };
    for (const auto& [name, at] : wanted_[pid]) {
      result_.name_to_output[name] = view(at);
      part.output_names.insert(name);
    }
    for (const auto& name : part.output_names)
      for (const auto& n : topological_order(result_.name_to_output.at(name))) {
        if (n->what() != kind::placeholder && n->what() != kind::size_param)
          continue;
        if (receives_.contains(n->name()) || promoted_names_.contains(n->name()))
          part.partition_input_names.insert(n->name());
        else
          part.user_input_names.insert(n->name());
      }
  }

  /// Node `root` as part `pid` computes it, without recursion: positions increase from
  /// children to users, so one pass over the positions reached, in order, builds them.
  node_ptr rewrite_in_part(std::uint32_t root, part_id pid,
                           std::map<std::uint32_t, node_ptr>& made) {
    std::vector<std::uint32_t> reached;
    std::vector<std::uint32_t> stack{root};
    std::set<std::uint32_t> seen{root};
    while (!stack.empty()) {
      const auto at = stack.back();
      stack.pop_back();
      reached.push_back(at);
      if (made.contains(at) || stops_at(at, pid))
        continue;
      const auto& n = order_.nodes[at];
      // A send's value is what it is stapled to: its data belongs to the part that sends it.
      const auto children =
        n->what() == kind::send ? std::span{n->children()}.first(1) : std::span{n->children()};
      for (const auto& child : children)
        if (const auto c = order_.index.find(child.get()); seen.insert(c).second)
          stack.push_back(c);
    }
    std::sort(reached.begin(), reached.end());
    for (auto at : reached) {
      if (made.contains(at))
        continue;
      const auto& n = order_.nodes[at];
      if (auto r = recv_placeholder_.find(at); r != recv_placeholder_.end())
        made[at] = r->second;
      else if (stops_at(at, pid))
        made[at] = promoted(at);
      else if (n->what() == kind::send)
        made[at] = made.at(order_.index.find(n->children()[0].get()));
      else {
        std::vector<node_ptr> children;
        bool changed = false;
        for (const auto& child : n->children()) {
          children.push_back(made.at(order_.index.find(child.get())));
          changed = changed || children.back() != child;
        }
        made[at] = changed ? n->with_children(std::move(children)) : n;
      }
    }
    return made.at(root);
  }

  /// A kept array computed in an earlier part: read here, not computed again.
  bool stops_at(std::uint32_t at, part_id pid) const {
    return recv_placeholder_.contains(at) ||
           (stored_[at] && home_[at] < pid && !is_input(*order_.nodes[at]));
  }

  /// The placeholder that carries kept array `at` from its part, which is told to output it.
  node_ptr promoted(std::uint32_t at) {
    auto [it, fresh] = promoted_.try_emplace(at);
    if (fresh) {
      const auto& n = order_.nodes[at];
      const auto name = "_pt_dist_" + std::to_string(receives_.size() + promoted_.size() - 1);
      it->second = placeholder(name, n->shape(), n->type());
      promoted_names_.insert(name);
      wanted_[home_[at]].emplace_back(name, at);
    }
    return it->second;
  }

  distributed_graph_part& part_at(part_id pid) {
    auto& part = result_.parts[pid];
    part.pid = pid;
    return part;
  }

  int rank_;
  detail::indexed_order order_;
  part_id last_ = 0;
  std::map<std::string, recv_info> receives_; // by placeholder name
  std::map<std::uint32_t, node_ptr> recv_placeholder_; // by position of the receive
  std::vector<bool> stored_; // by position: a kept array
  std::vector<part_id> home_; // by position: its part
  std::map<part_id, std::vector<std::pair<std::string, std::uint32_t>>> wanted_;
  std::map<std::uint32_t, node_ptr> promoted_; // by position: its placeholder
  std::set<std::string> promoted_names_;
  distributed_graph_partition result_;
};

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
  const auto everyone = all_gather_bytes(group, serialize(summarize(partition, group.rank())));
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

distributed_graph_partition find_distributed_partition(collective_group& group,
                                                       const node_ptr& outputs) {
  if (!outputs || outputs->what() != kind::outputs)
    throw invalid_argument("find_distributed_partition: give the outputs node (make_outputs)");
  return distributed_partitioner{outputs, group.rank()}.run(group);
}

std::pair<distributed_graph_partition, std::int64_t>
number_distributed_tags(distributed_graph_partition partition, std::int64_t base) {
  for (auto& [pid, part] : partition.parts) {
    for (auto& [name, info] : part.name_to_recv_node)
      info.int_tag += base;
    for (auto& [name, infos] : part.name_to_send_nodes)
      for (auto& info : infos)
        info.int_tag += base;
  }
  return {std::move(partition), base + partition.tag_count};
}

tensor_map execute_distributed_partition(const distributed_graph_partition& partition,
                                         collective_group& group, const tensor_map& inputs) {
  struct incoming {
    xt::xarray<double> buffer;
    std::optional<recv_handle> handle;
  };
  std::map<std::string, incoming> receives; // nodes of a map stay where they are
  for (const auto& [pid, part] : partition.parts)
    for (const auto& [name, info] : part.name_to_recv_node) {
      auto& r = receives[name];
      r.buffer = xt::zeros<double>(std::vector<std::size_t>(info.shape.begin(), info.shape.end()));
      r.handle.emplace(group.irecv(r.buffer, info.src, static_cast<int>(info.int_tag)));
    }
  tensor_map context = inputs;
  // Each value goes once the last part that reads it has run (outputs stay).
  std::map<std::string, part_id> last_reader;
  for (auto pid : partition.toposorted_part_ids)
    for (const auto& name : partition.parts.at(pid).all_input_names())
      last_reader[name] = pid;
  const std::set<std::string> kept(partition.overall_output_names.begin(),
                                   partition.overall_output_names.end());
  std::list<xt::xarray<double>> outgoing; // alive until their sends are done
  std::vector<collective_handle> sends;
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
  tensor_map results;
  for (const auto& name : partition.overall_output_names)
    results.emplace(name, context.at(name));
  return results;
}

} // namespace troupe::graph
