#include "troupe/staged/plan.hpp"

#include "troupe/staged/errors.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace troupe::staged {

namespace {

/// The properties to compute (not cached yet), dependencies first, checked.
class property_graph {
public:
  property_graph(const record& r, const std::vector<std::string>& wanted) : r_(r) {
    for (const auto& name : wanted)
      visit(name, "parallel_compute");
  }

  const std::vector<std::string>& order() const noexcept { return order_; }

private:
  void visit(const std::string& name, const std::string& reader) {
    const auto& s = r_.definition();
    if (!s.has_property(name))
      throw invalid_plan(reader + " reads '" + name + "', which '" + s.name() +
                         "' has no property");
    if (done_.contains(name) || r_.is_cached(name))
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
    done_.insert(name);
    order_.push_back(name);
  }

  const record& r_;
  std::set<std::string> active_, done_;
  std::vector<std::string> order_;
};

/// The stages over `order`, PhiML's way with a deterministic pick.
std::vector<stage> build_stages(const record& r, const std::vector<std::string>& order,
                                const shape& parallel) {
  const auto& s = r.definition();
  std::map<std::string, shape> distribution;
  for (const auto& name : order)
    distribution[name] = parallel.without(s.property_of(name).required_dims);
  std::set<std::string> done;
  std::vector<stage> stages;
  while (done.size() < order.size()) {
    std::set<std::string> candidates;
    std::optional<shape> pick;
    stage next;
    for (const auto& name : order) {
      if (done.contains(name))
        continue;
      const auto& deps = s.property_of(name).property_deps;
      const bool ready = std::all_of(deps.begin(), deps.end(), [&](const std::string& d) {
        return done.contains(d) || r.is_cached(d) ||
               (candidates.contains(d) && distribution.at(d) == distribution.at(name));
      });
      if (!ready)
        continue;
      candidates.insert(name);
      if (!pick)
        pick = distribution.at(name);
      if (distribution.at(name) == *pick)
        next.properties.push_back(name);
    }
    next.distributed = *pick;
    done.insert(next.properties.begin(), next.properties.end());
    stages.push_back(std::move(next));
  }
  return stages;
}

/// Each stage's fields, inputs and returned properties.
void fill_traffic(const record& r, const std::vector<std::string>& wanted,
                  std::vector<stage>& stages) {
  const auto& s = r.definition();
  std::map<std::string, std::size_t> stage_of;
  for (std::size_t k = 0; k < stages.size(); ++k)
    for (const auto& name : stages[k].properties)
      stage_of[name] = k;
  std::map<std::string, std::size_t> last_reader; // the last stage reading each property
  for (std::size_t k = 0; k < stages.size(); ++k)
    for (const auto& name : stages[k].properties)
      for (const auto& dep : s.property_of(name).property_deps)
        last_reader[dep] = k;
  const std::set<std::string> asked(wanted.begin(), wanted.end());
  for (std::size_t k = 0; k < stages.size(); ++k) {
    std::set<std::string> fields, inputs;
    for (const auto& name : stages[k].properties) {
      const auto& p = s.property_of(name);
      fields.insert(p.field_deps.begin(), p.field_deps.end());
      for (const auto& dep : p.property_deps)
        if (!stage_of.contains(dep) || stage_of.at(dep) < k)
          inputs.insert(dep);
      const bool later = last_reader.contains(name) && last_reader.at(name) > k;
      if (asked.contains(name) || later || p.persistent)
        stages[k].returned.push_back(name);
    }
    stages[k].fields.assign(fields.begin(), fields.end());
    stages[k].inputs.assign(inputs.begin(), inputs.end());
  }
}

} // namespace

compute_plan plan_compute(const record& r, const std::vector<std::string>& properties,
                          const compute_options& options) {
  if (options.memory_limit && !options.cache_dir)
    throw invalid_plan("parallel_compute: a memory_limit needs a cache_dir for what does not fit");
  const property_graph graph{r, properties};
  compute_plan plan;
  plan.stages = build_stages(r, graph.order(), r.dims().only(options.parallel_dims));
  fill_traffic(r, properties, plan.stages);
  for (const auto& st : plan.stages)
    if (!st.on_host())
      plan.workers = std::max(plan.workers, std::min(options.max_workers, st.distributed.volume()));
  return plan;
}

} // namespace troupe::staged
