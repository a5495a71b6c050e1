#include "stage_runner.hpp"

#include "record_access.hpp"

#include <deque>
#include <set>

namespace troupe::staged::detail {

namespace {

/// Runs the slices, at most `at_once` started and not yet done (max_workers holds for a pool
/// of more workers too), results in order. The first error stops new slices from starting and
/// is rethrown once every started one has ended (none may outlive the call).
std::vector<values> run_slices(std::vector<slice_job> jobs, std::size_t at_once,
                               const slice_starter& start) {
  std::deque<async_result<values>> running;
  std::vector<values> results;
  std::exception_ptr failure;
  const auto await_oldest = [&] {
    try {
      results.push_back(std::move(running.front()).get());
    } catch (...) {
      if (!failure)
        failure = std::current_exception();
    }
    running.pop_front();
  };
  for (auto& job : jobs) {
    if (failure)
      break;
    if (running.size() == at_once)
      await_oldest();
    try {
      running.push_back(start(std::move(job)));
    } catch (...) {
      failure = std::current_exception();
    }
  }
  while (!running.empty())
    await_oldest();
  if (failure)
    std::rethrow_exception(failure);
  return results;
}

/// The nodes `name` reads: an operation's named operands, a property's property_deps.
std::vector<std::string> reads(const record& r, const compute_plan& plan, const std::string& name) {
  auto op = plan.operations.find(name);
  if (op == plan.operations.end())
    return r.definition().property_of(name).property_deps;
  std::vector<std::string> names;
  for (const auto& operand : op->second.operands)
    if (!operand.name.empty())
      names.push_back(operand.name);
  return names;
}

/// Drops, after stage `k`, what stages up to k computed that nothing after k reads, unless it
/// was asked for or is a persistent property (an operation of a split property never is, but
/// the last, which is the property).
void drop_intermediates(record& r, const compute_plan& plan, std::size_t k,
                        const std::set<std::string>& asked) {
  std::set<std::string> read_later;
  for (std::size_t later = k + 1; later < plan.stages.size(); ++later)
    for (const auto& name : plan.stages[later].properties)
      for (const auto& dep : reads(r, plan, name))
        read_later.insert(dep);
  const auto& s = r.definition();
  for (std::size_t done = 0; done <= k; ++done)
    for (const auto& name : plan.stages[done].properties)
      if (!asked.contains(name) && !read_later.contains(name) &&
          !(s.has_property(name) && s.property_of(name).persistent))
        r.forget(name);
}

} // namespace

compute_plan run_stages(record& r, const std::vector<std::string>& properties,
                        const compute_options& options, const slice_starter& start) {
  const auto plan = plan_compute(r, properties, options);
  const std::set<std::string> asked(properties.begin(), properties.end());
  for (std::size_t k = 0; k < plan.stages.size(); ++k) {
    const auto& st = plan.stages[k];
    if (st.on_host() || plan.workers == 0)
      record_access::computing(r, [&] {
        for (const auto& name : st.properties)
          compute_node(r, name, plan.operations);
      });
    else
      stack_into(r, st, run_slices(cut_slices(r, plan, k, options), plan.workers, start));
    if (!options.keep_intermediate)
      drop_intermediates(r, plan, k, asked);
  }
  return plan;
}

} // namespace troupe::staged::detail
