// find_distributed_partition and number_distributed_tags: this rank's communications,
// exchanged with every member, leveled alike on all, and this rank's DAG cut into parts.
#include "placeholder_names.hpp"
#include "troupe/graph/distributed.hpp"

#include "troupe/actors/serialization.hpp"
#include "troupe/graph/analysis.hpp"
#include "troupe/graph/errors.hpp"

#include "address_index.hpp"
#include "batches.hpp"
#include "communications.hpp"

#include <cereal/types/map.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>

#include <algorithm>
#include <bit>
#include <optional>
#include <span>

namespace troupe::graph {

namespace {

using detail::comm_id;
using detail::describe;

enum class failure : std::uint8_t { none, not_supported, duplicate_send, duplicate_recv };

/// What a rank tells the others: its sends (each with the receives its data needs), its
/// receives, or why it cannot go on. A send whose data needs every receive an earlier send's
/// needs, and more, lists only the more and `extends` that send: where each exchange feeds the
/// next, full lists would grow with the square of the exchanges.
struct local_comms {
  std::map<comm_id, std::vector<comm_id>> sends;
  std::map<comm_id, comm_id> extends;
  std::vector<comm_id> recvs;
  failure why = failure::none;
  std::string text;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(sends, extends, recvs, why, text);
  }
};

/// Why this rank cannot go on, for the others.
local_comms failed(failure why, std::string text) {
  local_comms comms;
  comms.why = why;
  comms.text = std::move(text);
  return comms;
}

/// This rank's sends and receives in `order`, with their nodes.
struct found_comms {
  local_comms info;
  std::map<comm_id, node_ptr> send_nodes, recv_nodes;
};

/// This rank's receives, checked; a failure is recorded in `found.info`.
void find_receives(const detail::indexed_order& order, int rank, found_comms& found) {
  for (const auto& n : order.nodes) {
    if (n->what() != kind::recv)
      continue;
    const comm_id id{static_cast<int>(n->ints()[0]), rank, n->name()};
    const auto [at, fresh] = found.recv_nodes.emplace(id, n);
    if (id.src == rank) {
      found.info =
        failed(failure::not_supported, "a receive from this rank itself " + describe(id));
      return;
    }
    if (!fresh && !(*at->second == *n)) {
      found.info = failed(failure::duplicate_recv, "two receives " + describe(id));
      return;
    }
  }
  for (const auto& [id, n] : found.recv_nodes)
    found.info.recvs.push_back(id);
}

/// The receives each node depends on, as bit sets over found.info.recvs (sorted, so bits come
/// out in sorted order), each freed once its last user has read it: a node late in a long
/// exchange depends on every earlier receive, and lists of them would take quadratic time.
class receive_sets {
public:
  receive_sets(const detail::indexed_order& order, const std::vector<comm_id>& recvs, int rank)
    : order_(order), rank_(rank), words_((recvs.size() + 63) / 64), sets_(order.nodes.size()),
      readers_(order.nodes.size(), 0) {
    for (auto c : order.child_positions)
      ++readers_[c];
    for (std::uint32_t bit = 0; bit < recvs.size(); ++bit)
      bit_of_.emplace(recvs[bit], bit); // structurally equal receives are one: one id, one bit
  }

  /// Node i's set, from its children's (which must have been built); a receive adds its own.
  void build(std::uint32_t i) {
    auto& mine = sets_[i];
    mine.assign(words_, 0);
    for (auto c : order_.children_of(i))
      for (std::size_t w = 0; w < words_; ++w)
        mine[w] |= sets_[c][w];
    if (const auto& n = order_.nodes[i]; n->what() == kind::recv) {
      const auto bit = bit_of_.at(comm_id{static_cast<int>(n->ints()[0]), rank_, n->name()});
      mine[bit / 64] |= std::uint64_t{1} << (bit % 64);
    }
  }

  const std::vector<std::uint64_t>& bits(std::uint32_t i) const { return sets_[i]; }

  /// Node i's receives that are not in `known` (bits of a set like bits()).
  std::vector<comm_id> receives_beyond(std::uint32_t i, const std::vector<std::uint64_t>& known,
                                       const std::vector<comm_id>& recvs) const {
    std::vector<comm_id> out;
    for (std::size_t w = 0; w < words_; ++w)
      for (auto word = sets_[i][w] & ~(w < known.size() ? known[w] : 0); word != 0;
           word &= word - 1)
        out.push_back(recvs[w * 64 + static_cast<std::size_t>(std::countr_zero(word))]);
    return out;
  }

  /// Whether every receive of `known` is one of node i's.
  bool covers(std::uint32_t i, const std::vector<std::uint64_t>& known) const {
    for (std::size_t w = 0; w < words_ && w < known.size(); ++w)
      if ((known[w] & ~sets_[i][w]) != 0)
        return false;
    return true;
  }

  /// Node i is done with its children's sets.
  void release_children(std::uint32_t i) {
    for (auto c : order_.children_of(i))
      if (--readers_[c] == 0)
        std::vector<std::uint64_t>{}.swap(sets_[c]);
  }

private:
  const detail::indexed_order& order_;
  int rank_;
  std::size_t words_;
  std::vector<std::vector<std::uint64_t>> sets_;
  std::vector<std::uint32_t> readers_;
  std::map<comm_id, std::uint32_t> bit_of_;
};

/// Records each send's receives in a local_comms: as a difference from the send recorded just
/// before it when its data needs all of that one's receives (see local_comms::extends).
class send_lists {
public:
  void record(const comm_id& id, std::uint32_t data, const receive_sets& needs, local_comms& info) {
    if (last_ && needs.covers(data, last_needs_)) {
      info.sends[id] = needs.receives_beyond(data, last_needs_, info.recvs);
      info.extends.emplace(id, *last_);
    } else {
      info.sends[id] = needs.receives_beyond(data, {}, info.recvs);
    }
    last_ = id;
    last_needs_ = needs.bits(data);
  }

private:
  std::optional<comm_id> last_;
  std::vector<std::uint64_t> last_needs_;
};

found_comms find_comms(const detail::indexed_order& order, int rank) {
  found_comms found;
  find_receives(order, rank, found);
  auto& info = found.info;
  if (info.why != failure::none)
    return found;
  receive_sets needs{order, info.recvs, rank};
  send_lists lists;
  for (std::uint32_t i = 0; i < order.nodes.size(); ++i) {
    needs.build(i);
    const auto& n = order.nodes[i];
    if (n->what() == kind::send) {
      const comm_id id{rank, static_cast<int>(n->ints()[0]), n->name()};
      const auto [at, fresh] = found.send_nodes.emplace(id, n);
      if (id.dest == rank) {
        info = failed(failure::not_supported, "a send to this rank itself " + describe(id));
        return found;
      }
      if (!fresh && !(*at->second == *n)) {
        info = failed(failure::duplicate_send, "two sends " + describe(id));
        return found;
      }
      if (fresh) // a structurally equal copy needs the same
        lists.record(id, order.children_of(i)[1], needs, info);
    }
    needs.release_children(i);
  }
  return found;
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
std::map<comm_id, int> levels_of(const std::map<comm_id, std::vector<comm_id>>& sends,
                                 const std::map<comm_id, comm_id>& extends) {
  try {
    return detail::batch_levels<comm_id>(
      sends, [](const comm_id& id) { return describe(id); }, nullptr, extends);
  } catch (const cycle_error& e) {
    throw cycle_error(std::string{"find_distributed_partition: the sends wait on each other's "
                                  "receives: "} +
                      e.what());
  }
}

/// Builds this rank's parts once every rank's communications are known.
class distributed_partitioner {
public:
  distributed_partitioner(const node_ptr& outputs, int rank)
    : rank_(rank), order_(detail::index_order(outputs)), recv_placeholder_(order_.nodes.size()),
      made_(order_.nodes.size()), made_by_(order_.nodes.size(), -1),
      walked_(order_.nodes.size(), 0) {}

  distributed_graph_partition run(collective_group& group) {
    auto found = find_comms(order_, rank_);
    const auto everyone = detail::all_gather_bytes(group, serialize(found.info));
    std::map<comm_id, std::vector<comm_id>> sends;
    std::map<comm_id, comm_id> extends;
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
      extends.insert(info.extends.begin(), info.extends.end());
      for (const auto& id : info.recvs) {
        recvs.insert(id);
        tags.insert(id.tag);
      }
    }
    check_partners(sends, recvs);
    const auto level = levels_of(sends, extends);
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
      recv_placeholder_[order_.index.find(n.get())] =
        detail::internal_placeholder(name, n->shape(), n->type());
    }
    // Structurally equal receives are one: each takes the placeholder of the one kept.
    for (std::uint32_t i = 0; i < order_.nodes.size(); ++i) {
      const auto& n = order_.nodes[i];
      if (n->what() == kind::recv && !recv_placeholder_[i]) {
        const comm_id id{static_cast<int>(n->ints()[0]), rank_, n->name()};
        recv_placeholder_[i] = recv_placeholder_[order_.index.find(found.recv_nodes.at(id).get())];
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
    // The lowest level of a send whose data needs each node: seeded at the sends' data, passed
    // from users to children (positions decrease from users to children).
    home_.assign(count, last_);
    for (const auto& [id, n] : found.send_nodes) {
      const auto data = order_.index.find(n->children()[1].get());
      home_[data] = std::min<part_id>(home_[data], level.at(id));
    }
    for (auto i = count; i-- > 0;)
      for (auto c : order_.children_of(i))
        home_[c] = std::min(home_[c], home_[i]);
  }

  /// Builds part `pid`'s outputs: every wanted array, its kept inputs from earlier parts read
  /// as placeholders (and asked of their parts), receives as theirs, sends as their values.
  void build_part(part_id pid) {
    auto& part = part_at(pid);
    for (const auto& [name, at] : wanted_[pid]) {
      result_.name_to_output[name] = rewrite_in_part(at, pid, part);
      part.output_names.insert(name);
    }
  }

  /// A placeholder or size parameter part `pid` reads (and those of its shape): a receive's or
  /// a kept array's is a partition input, any other the user's.
  void note_input(const node_ptr& n, distributed_graph_part& part) const {
    if (n->what() != kind::placeholder && n->what() != kind::size_param)
      return;
    if (receives_.contains(n->name()) || promoted_names_.contains(n->name()))
      part.partition_input_names.insert(n->name());
    else
      part.user_input_names.insert(n->name());
    for (const auto& parameter : n->children())
      part.user_input_names.insert(parameter->name());
  }

  /// Node `root` as part `pid` computes it, without recursion: positions increase from
  /// children to users, so one pass over the positions reached, in order, builds them.
  node_ptr rewrite_in_part(std::uint32_t root, part_id pid, distributed_graph_part& part) {
    const auto made = [&](std::uint32_t at) { return made_by_[at] == pid; };
    std::vector<std::uint32_t> reached;
    std::vector<std::uint32_t> stack{root};
    walked_[root] = ++walk_;
    while (!stack.empty()) {
      const auto at = stack.back();
      stack.pop_back();
      reached.push_back(at);
      if (made(at) || stops_at(at, pid))
        continue;
      // A send's value is what it is stapled to: its data belongs to the part that sends it.
      auto children = order_.children_of(at);
      if (order_.nodes[at]->what() == kind::send)
        children = children.first(1);
      for (auto c : children)
        if (walked_[c] != walk_) {
          walked_[c] = walk_;
          stack.push_back(c);
        }
    }
    std::sort(reached.begin(), reached.end());
    for (auto at : reached)
      if (!made(at)) {
        made_[at] = as_in_part(at, pid);
        made_by_[at] = pid;
        note_input(made_[at], part); // the leaves of what the part computes: what it reads
      }
    return made_[root];
  }

  /// Node `at` in part `pid`, its children there already made.
  node_ptr as_in_part(std::uint32_t at, part_id pid) {
    const auto& n = order_.nodes[at];
    if (recv_placeholder_[at])
      return recv_placeholder_[at];
    if (stops_at(at, pid))
      return promoted(at);
    const auto children = order_.children_of(at);
    if (n->what() == kind::send)
      return made_[children[0]];
    std::vector<node_ptr> rewritten;
    bool changed = false;
    for (std::size_t k = 0; k < children.size(); ++k) {
      rewritten.push_back(made_[children[k]]);
      changed = changed || rewritten.back() != n->children()[k];
    }
    return changed ? n->with_children(std::move(rewritten)) : n;
  }

  /// A kept array computed in an earlier part: read here, not computed again.
  bool stops_at(std::uint32_t at, part_id pid) const {
    return recv_placeholder_[at] != nullptr ||
           (stored_[at] && home_[at] < pid && !is_input(*order_.nodes[at]));
  }

  /// The placeholder that carries kept array `at` from its part, which is told to output it.
  node_ptr promoted(std::uint32_t at) {
    auto [it, fresh] = promoted_.try_emplace(at);
    if (fresh) {
      const auto& n = order_.nodes[at];
      const auto name = "_pt_dist_" + std::to_string(receives_.size() + promoted_.size() - 1);
      it->second = detail::internal_placeholder(name, n->shape(), n->type());
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
  std::vector<node_ptr> recv_placeholder_; // by position: a receive's placeholder
  // Each node as the part being built computes it, where made_by_ is that part: one vector for
  // all parts, so that no part clears it (parts are built one at a time).
  std::vector<node_ptr> made_;
  std::vector<part_id> made_by_;
  std::vector<std::uint32_t> walked_; // by position: the last walk that reached it
  std::uint32_t walk_ = 0;
  std::vector<bool> stored_; // by position: a kept array
  std::vector<part_id> home_; // by position: its part
  std::map<part_id, std::vector<std::pair<std::string, std::uint32_t>>> wanted_;
  std::map<std::uint32_t, node_ptr> promoted_; // by position: its placeholder
  std::set<std::string> promoted_names_;
  distributed_graph_partition result_;
};

} // namespace

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

} // namespace troupe::graph
