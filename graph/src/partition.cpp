#include "troupe/graph/partition.hpp"

#include "placeholder_names.hpp"
#include "troupe/graph/analysis.hpp"
#include "troupe/graph/errors.hpp"

#include "address_index.hpp"
#include "part_runner.hpp"

#include <limits>

namespace troupe::graph {

detail::part_waits detail::waits_of(const std::map<part_id, graph_part>& parts) {
  part_waits w;
  for (const auto& [pid, p] : parts) {
    w.waiting[pid] = p.needed_pids.size();
    for (auto need : p.needed_pids)
      w.needed_by[need].push_back(pid);
  }
  return w;
}

namespace {

bool is_named_input(const node_ptr& n) {
  return n->what() == kind::placeholder || n->what() == kind::size_param;
}

/// Builds a partition in one pass over the DAG, children first. Per-node facts live in vectors
/// by topological position.
class partitioner {
public:
  explicit partitioner(const std::function<part_id(const node_ptr&)>& part_of)
    : part_of_(part_of) {}

  graph_partition run(const node_ptr& outputs) {
    order_ = detail::index_order(outputs);
    detail::check_placeholder_names(order_.nodes);
    const auto count = order_.nodes.size();
    pid_.resize(count);
    rewritten_.resize(count);
    cuts_.resize(count);
    noted_by_.assign(count, no_part);
    cut_digits_ = std::to_string(count).size();
    for (std::size_t i = 0; i < count; ++i) {
      const auto& n = order_.nodes[i];
      if (n->what() == kind::outputs)
        add_outputs(n, order_.children_of(i));
      else if (!is_input(*n))
        rewrite(i);
    }
    order_parts();
    return std::move(result_);
  }

private:
  graph_part& part(part_id pid) {
    if (last_part_ != nullptr && last_part_->pid == pid)
      return *last_part_; // consecutive nodes are mostly in one part; map nodes stay put
    last_part_ = &result_.parts[pid];
    last_part_->pid = pid;
    return *last_part_;
  }

  void rewrite(std::size_t i) {
    const auto& n = order_.nodes[i];
    const auto pid = part_of_(n);
    pid_[i] = pid;
    auto& here = part(pid);
    std::vector<node_ptr> children;
    children.reserve(n->children().size());
    bool changed = false;
    const auto positions = order_.children_of(i);
    for (std::size_t k = 0; k < positions.size(); ++k) {
      const auto& child = n->children()[k];
      children.push_back(in_part(child, positions[k], pid, here));
      changed = changed || children.back() != child;
    }
    rewritten_[i] = changed ? n->with_children(std::move(children)) : n;
  }

  /// What `child` (at `at` in the order) is within part `pid`: itself (an input), its rewritten
  /// self (same part), or the placeholder that carries its value over from its own part.
  node_ptr in_part(const node_ptr& child, std::uint32_t at, part_id pid, graph_part& here) {
    // A node read from part `pid` is noted in it once, however many of its nodes read it: the
    // name sets are the costliest part of the pass otherwise.
    const bool noted = noted_by_[at] == pid;
    noted_by_[at] = pid;
    if (is_input(*child)) {
      if (!noted && is_named_input(child))
        note_inputs(child, here);
      return child;
    }
    const auto producer = pid_[at];
    if (producer == pid)
      return rewritten_[at];
    auto& cut = cuts_[at];
    if (!cut) {
      cut = detail::internal_placeholder(cut_name(cut_count_++), child->shape(), child->type());
      const auto& name = cut->name();
      result_.var_name_to_result.emplace_hint(result_.var_name_to_result.end(), name,
                                              rewritten_[at]);
      auto& outputs = part(producer).output_names;
      outputs.emplace_hint(outputs.end(), name);
    }
    if (!noted) {
      here.partition_input_names.emplace_hint(here.partition_input_names.end(), cut->name());
      here.needed_pids.insert(producer);
      for (const auto& parameter : cut->children()) // a cut of a size parameter's shape
        here.user_input_names.insert(parameter->name());
    }
    return cut;
  }

  /// A placeholder or size parameter read by a part, and the size parameters of its shape.
  static void note_inputs(const node_ptr& input, graph_part& here) {
    here.user_input_names.insert(input->name());
    for (const auto& parameter : input->children())
      here.user_input_names.insert(parameter->name());
  }

  /// "_pt_part_ph_<n>", n zero-padded to as many digits as the DAG's size has: names made later
  /// sort later, so most go in at the end of their sets, without a search.
  std::string cut_name(std::size_t n) const {
    static constexpr std::string_view prefix = "_pt_part_ph_";
    const auto digits = std::to_string(n);
    std::string name;
    name.reserve(prefix.size() + std::max(cut_digits_, digits.size()));
    name.append(prefix).append(cut_digits_ - std::min(cut_digits_, digits.size()), '0');
    return name.append(digits);
  }

  void add_outputs(const node_ptr& outputs, std::span<const std::uint32_t> positions) {
    for (std::size_t i = 0; i < outputs->children().size(); ++i) {
      const auto& name = outputs->names()[i];
      const auto& child = outputs->children()[i];
      if (is_input(*child)) {
        auto& p = part(part_of_(child));
        if (is_named_input(child))
          note_inputs(child, p);
        p.output_names.insert(name);
        result_.var_name_to_result[name] = child;
        continue;
      }
      const auto at = positions[i];
      part(pid_[at]).output_names.insert(name);
      result_.var_name_to_result[name] = rewritten_[at];
    }
  }

  /// Kahn's order over needed_pids; among ready parts, the one whose sorted output names come
  /// first (then the lower pid).
  void order_parts() {
    auto [waiting, needed_by] = detail::waits_of(result_.parts);
    const auto key = [&](part_id pid) {
      const auto& names = result_.parts.at(pid).output_names;
      return std::pair{std::vector<std::string>(names.begin(), names.end()), pid};
    };
    std::set<std::pair<std::vector<std::string>, part_id>> ready;
    for (const auto& [pid, count] : waiting)
      if (count == 0)
        ready.insert(key(pid));
    while (!ready.empty()) {
      const auto pid = ready.begin()->second;
      ready.erase(ready.begin());
      result_.toposorted_part_ids.push_back(pid);
      for (auto user : needed_by[pid])
        if (--waiting[user] == 0)
          ready.insert(key(user));
    }
    if (result_.toposorted_part_ids.size() == result_.parts.size())
      return;
    std::string stuck;
    for (const auto& [pid, count] : waiting)
      if (count != 0)
        stuck += (stuck.empty() ? "" : ", ") + std::to_string(pid);
    throw partition_induced_cycle("find_partition: the parts depend on each other in a circle; "
                                  "parts in or after it: " +
                                  stuck);
  }

  const std::function<part_id(const node_ptr&)>& part_of_;
  graph_partition result_;
  graph_part* last_part_ = nullptr;
  detail::indexed_order order_;
  std::vector<part_id> pid_;
  std::vector<node_ptr> rewritten_;
  std::vector<node_ptr> cuts_; // by the position of the node each carries
  static constexpr part_id no_part = std::numeric_limits<part_id>::min();
  std::vector<part_id> noted_by_; // the part that last noted reading each node
  std::size_t cut_count_ = 0;
  std::size_t cut_digits_ = 1;
};

/// What part `pid` computes from `context`.
tensor_map run_part(const graph_partition& partition, part_id pid, const tensor_map& context) {
  tensor_map inputs;
  for (const auto& name : partition.parts.at(pid).all_input_names())
    if (auto at = context.find(name); at != context.end())
      inputs.emplace(name, at->second);
  return evaluate(detail::part_outputs(partition, pid), inputs);
}

} // namespace

std::set<std::string> graph_part::all_input_names() const {
  auto all = user_input_names;
  all.insert(partition_input_names.begin(), partition_input_names.end());
  return all;
}

graph_partition find_partition(const node_ptr& outputs,
                               const std::function<part_id(const node_ptr&)>& part_of) {
  if (!outputs || outputs->what() != kind::outputs)
    throw invalid_argument("find_partition: give the outputs node (make_outputs) of the graph");
  if (!part_of)
    throw invalid_argument("find_partition: no part function");
  return partitioner{part_of}.run(outputs);
}

tensor_map execute_partition(const graph_partition& partition, tensor_map inputs) {
  for (auto pid : partition.toposorted_part_ids)
    for (auto& [name, value] : run_part(partition, pid, inputs))
      inputs.insert_or_assign(name, std::move(value));
  return inputs;
}

} // namespace troupe::graph
