#include "troupe/staged/plan.hpp"

#include "troupe/staged/errors.hpp"

#include "troupe/staged/disk_cache.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace troupe::staged {

namespace {

/// A property, or an operation of a split MIXED property, as the stages see it.
struct plan_node {
  std::vector<std::string> field_deps, node_deps;
  shape distribution;
  bool persistent = false;
};

/// What an operand of an operation is, and its dims if they can be known before running.
struct traced {
  operation::operand operand;
  std::optional<shape> dims;
};

/// The dims of `r` that slices are cut along; invalid_plan for a named dim `r` lacks, unless
/// the options say to ignore it.
shape parallel_dims_of(const record& r, const compute_options& options) {
  const auto dims = r.dims();
  if (!options.ignore_unknown_parallel_dims)
    for (const auto& name : options.parallel_dims.named())
      if (!dims.contains(name)) {
        std::string all;
        for (const auto& d : dims.names())
          all += (all.empty() ? "" : ", ") + d;
        throw invalid_plan("parallel_compute: parallel_dims names '" + name + "', a dim record '" +
                           r.definition().name() +
                           "' has not (its dims: " + (all.empty() ? "none" : all) +
                           "); compute_options::ignore_unknown_parallel_dims splits along the "
                           "others");
      }
  return dims.only(options.parallel_dims);
}

/// The nodes to compute (not cached yet), dependencies first, checked; MIXED properties split.
class planner {
public:
  planner(const record& r, const compute_options& options)
    : r_(r), parallel_(parallel_dims_of(r, options)) {}

  void visit(const std::string& name, const std::string& reader) {
    const auto& s = r_.definition();
    if (!s.has_property(name))
      throw invalid_plan(reader + " reads '" + name + "', which '" + s.name() +
                         "' has no property");
    if (nodes_.contains(name) || r_.is_cached(name))
      return;
    if (!active_.insert(name).second)
      throw invalid_plan("properties of '" + s.name() + "' read each other in a circle, '" + name +
                         "' among them");
    const auto& p = s.property_of(name);
    for (const auto& f : p.field_deps)
      if (!s.has_field(f))
        throw invalid_plan("property '" + name + "' reads field '" + f + "', which '" + s.name() +
                           "' has not");
    for (const auto& dep : p.property_deps)
      visit(dep, "property '" + name + "'");
    active_.erase(name);
    if (!p.mixed || !split(name, *p.mixed, p.persistent))
      add(name, {p.field_deps, p.property_deps, parallel_.without(p.required_dims), p.persistent});
  }

  const std::vector<std::string>& order() const noexcept { return order_; }
  const std::map<std::string, plan_node>& nodes() const noexcept { return nodes_; }
  std::map<std::string, operation> operations() && { return std::move(operations_); }

private:
  void add(const std::string& name, plan_node node) {
    nodes_.emplace(name, std::move(node));
    order_.push_back(name);
  }

  /// Splits `property` into its operations; false if it has none (it then runs whole).
  bool split(const std::string& property, const expr& e, bool persistent) {
    std::vector<operation> ops;
    std::vector<plan_node> op_nodes;
    last_dims_ = trace(property, e, ops, op_nodes).dims;
    if (ops.empty())
      return false;
    ops.back().name = property; // the last operation is the property itself
    op_nodes.back().persistent = persistent;
    if (last_dims_)
      traced_dims_.emplace(property, *last_dims_);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      add(ops[i].name, std::move(op_nodes[i]));
      operations_.emplace(ops[i].name, std::move(ops[i]));
    }
    return true;
  }

  traced trace(const std::string& property, const expr& e, std::vector<operation>& ops,
               std::vector<plan_node>& op_nodes) {
    const auto& n = e.root();
    switch (n.what) {
    case expr::node::kind::constant: return {{{}, n.value}, shape{}};
    case expr::node::kind::field: return {{n.name, 0}, r_.get(n.name).dims()};
    case expr::node::kind::property:
      if (r_.is_cached(n.name))
        return {{n.name, 0}, r_.get(n.name).dims()};
      if (auto known = traced_dims_.find(n.name); known != traced_dims_.end())
        return {{n.name, 0}, known->second}; // a MIXED property split before this one
      return {{n.name, 0}, std::nullopt};
    case expr::node::kind::operation: break;
    }
    std::vector<traced> in;
    for (const auto& operand : n.operands)
      in.push_back(trace(property, operand, ops, op_nodes));
    if (n.dims.empty())
      return emit(property, n.name, in, {}, ops, op_nodes);
    // A reduction over split dims and others: over the others on the slices first.
    const auto& input = in.front().dims;
    std::vector<std::string> local, split;
    for (const auto& d : n.dims)
      (input && parallel_.contains(d) && input->contains(d) ? split : local).push_back(d);
    if (local.empty() || split.empty())
      return emit(property, n.name, in, n.dims, ops, op_nodes);
    auto partial = emit(property, n.name, in, local, ops, op_nodes);
    return emit(property, n.name, {partial}, split, ops, op_nodes);
  }

  /// Operation `op` of `in` (over `dims`, a reduction), named "<property>_<i>_<op>".
  traced emit(const std::string& property, const std::string& op, const std::vector<traced>& in,
              const std::vector<std::string>& dims, std::vector<operation>& ops,
              std::vector<plan_node>& op_nodes) {
    operation o{property + "_" + std::to_string(ops.size()) + "_" + op, op, {}, dims};
    plan_node node;
    std::optional<shape> input = shape{};
    for (const auto& each : in) {
      o.operands.push_back(each.operand);
      if (each.operand.name.empty())
        continue;
      (r_.definition().has_field(each.operand.name) ? node.field_deps : node.node_deps)
        .push_back(each.operand.name);
      input = input && each.dims ? std::optional{input->merged(*each.dims)} : std::nullopt;
    }
    // Over the parallel dims its operands have (all of them when that is unknown), less those
    // it reduces.
    node.distribution = (input ? parallel_.only(dim_filter::names(input->names())) : parallel_)
                          .without(dim_filter::names(dims));
    std::optional<shape> out;
    if (input)
      out = input->without(dim_filter::names(dims));
    ops.push_back(std::move(o));
    op_nodes.push_back(std::move(node));
    return {{ops.back().name, 0}, out};
  }

  const record& r_;
  shape parallel_;
  std::set<std::string> active_;
  std::map<std::string, plan_node> nodes_;
  std::vector<std::string> order_;
  std::map<std::string, operation> operations_;
  std::map<std::string, shape> traced_dims_; // the dims of split properties, where known
  std::optional<shape> last_dims_;
};

bool cached_or_done(const record& r, const std::set<std::string>& done, const std::string& name) {
  return done.contains(name) || r.is_cached(name);
}

/// The stages over `order`, PhiML's way with a deterministic pick.
std::vector<stage> build_stages(const record& r, const std::vector<std::string>& order,
                                const std::map<std::string, plan_node>& nodes) {
  std::set<std::string> done;
  std::vector<stage> stages;
  while (done.size() < order.size()) {
    std::set<std::string> candidates;
    std::optional<shape> pick;
    stage next;
    for (const auto& name : order) {
      if (done.contains(name))
        continue;
      const auto& node = nodes.at(name);
      const bool ready =
        std::all_of(node.node_deps.begin(), node.node_deps.end(), [&](const auto& d) {
          return cached_or_done(r, done, d) ||
                 (candidates.contains(d) && nodes.at(d).distribution == node.distribution);
        });
      if (!ready)
        continue;
      candidates.insert(name);
      if (!pick)
        pick = node.distribution;
      if (node.distribution == *pick)
        next.properties.push_back(name);
    }
    next.distributed = *pick;
    done.insert(next.properties.begin(), next.properties.end());
    stages.push_back(std::move(next));
  }
  return stages;
}

/// Each stage's fields, inputs and returned nodes.
void fill_traffic(const std::vector<std::string>& wanted,
                  const std::map<std::string, plan_node>& nodes, std::vector<stage>& stages) {
  std::map<std::string, std::size_t> stage_of, last_reader;
  for (std::size_t k = 0; k < stages.size(); ++k)
    for (const auto& name : stages[k].properties) {
      stage_of[name] = k;
      for (const auto& dep : nodes.at(name).node_deps)
        last_reader[dep] = k;
    }
  const std::set<std::string> asked(wanted.begin(), wanted.end());
  for (std::size_t k = 0; k < stages.size(); ++k) {
    std::set<std::string> fields, inputs;
    for (const auto& name : stages[k].properties) {
      const auto& node = nodes.at(name);
      fields.insert(node.field_deps.begin(), node.field_deps.end());
      for (const auto& dep : node.node_deps)
        if (!stage_of.contains(dep) || stage_of.at(dep) < k)
          inputs.insert(dep);
      const bool later = last_reader.contains(name) && last_reader.at(name) > k;
      if (asked.contains(name) || later || node.persistent)
        stages[k].returned.push_back(name);
    }
    stages[k].fields.assign(fields.begin(), fields.end());
    stages[k].inputs.assign(inputs.begin(), inputs.end());
  }
}

} // namespace

compute_plan plan_compute(const record& r, const std::vector<std::string>& properties,
                          const compute_options& options) {
  if (options.memory_limit && !disk_cache_available())
    throw invalid_plan("parallel_compute: a memory_limit needs the disk cache, and this build of "
                       "troupe has none (configure it with TROUPE_WITH_HDF5=ON, which needs "
                       "libhdf5-dev)");
  if (options.memory_limit && !options.cache_dir)
    throw invalid_plan("parallel_compute: a memory_limit needs a cache_dir for what does not fit");
  planner graph{r, options};
  for (const auto& name : properties)
    graph.visit(name, "parallel_compute");
  compute_plan plan;
  plan.stages = build_stages(r, graph.order(), graph.nodes());
  fill_traffic(properties, graph.nodes(), plan.stages);
  plan.operations = std::move(graph).operations();
  for (const auto& st : plan.stages)
    if (!st.on_host())
      plan.workers = std::max(plan.workers, std::min(options.max_workers, st.distributed.volume()));
  return plan;
}

} // namespace troupe::staged
