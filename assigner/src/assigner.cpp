#include "troupe/assigner/assigner.hpp"

#include "problem.hpp"
#include "search.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/assigner/placement_loss.hpp"

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>

namespace troupe {

namespace {

using detail::problem;

std::string megabytes(double units, const problem& p) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f", units * p.size_unit / (1 << 20));
  return text;
}

/// The cases where no placement can fit, with the shortfall named.
void check_capacity(const problem& p) {
  double total_size = 0, total_capacity = 0, largest_capacity = 0;
  for (double s : p.size)
    total_size += s;
  for (double c : p.capacity) {
    total_capacity += c;
    largest_capacity = std::max(largest_capacity, c);
  }
  if (total_size > total_capacity)
    throw capacity_error("Estimated model will use " + megabytes(total_size, p) +
                         " MB, but only have " + megabytes(total_capacity, p) +
                         " MB allowed memory in total (short by " +
                         megabytes(total_size - total_capacity, p) + " MB)");
  for (std::size_t i = 0; i < p.n; ++i)
    if (p.size[i] > largest_capacity)
      throw capacity_error("module " + std::to_string(i) + " needs " + megabytes(p.size[i], p) +
                           " MB, but the largest device allows " + megabytes(largest_capacity, p) +
                           " MB");
}

struct gradient_run {
  xt::xtensor<double, 2> logits;
  std::vector<double> trace;
};

gradient_run run_gradient(const problem& p, xt::xtensor<double, 2> logits, int iterations,
                          double learning_rate) {
  gradient_run run;
  const prepared_placement prepared{p.tensors, p.connections};
  adam_state adam{.learning_rate = learning_rate};
  run.trace.reserve(static_cast<std::size_t>(iterations) + 1);
  for (int t = 0; t < iterations; ++t)
    run.trace.push_back(optimize_placement(adam, logits, prepared, p.weights));
  run.trace.push_back(evaluate_placement(logits, prepared, p.weights).total);
  run.logits = std::move(logits);
  return run;
}

std::vector<std::size_t> argmax_rows(const xt::xtensor<double, 2>& logits) {
  std::vector<std::size_t> a(logits.shape(0), 0);
  for (std::size_t i = 0; i < logits.shape(0); ++i)
    for (std::size_t j = 1; j < logits.shape(1); ++j)
      if (logits(i, j) > logits(i, a[i]))
        a[i] = j;
  return a;
}

xt::xtensor<double, 2> softmax_rows(const xt::xtensor<double, 2>& logits) {
  xt::xtensor<double, 2> p = logits;
  for (std::size_t i = 0; i < p.shape(0); ++i) {
    const double top = *std::max_element(&p(i, 0), &p(i, 0) + p.shape(1));
    double sum = 0;
    for (std::size_t j = 0; j < p.shape(1); ++j)
      sum += p(i, j) = std::exp(p(i, j) - top);
    for (std::size_t j = 0; j < p.shape(1); ++j)
      p(i, j) /= sum;
  }
  return p;
}

/// How the discrete search spends its effort: in how many independent chains, each with what
/// budget.
struct search_plan {
  std::size_t chains = 1;
  detail::placement_search::budget per_chain;
};

/// Chains: a chain needs hundreds of rounds per module to settle, so small problems split their
/// effort into up to 8 chains (on the reference set, n <= 64, the worst J / J* over five seeds
/// went from 1.26 to 1.12 with 8 chains) and large ones keep it in one (at n = 128 and 256, one
/// chain instead of 8 took the mean J against the 60 s local search from 1.02 to 0.94 over three
/// seeds). Effort: a budget of work (see placement_search::budget; ~2 ns a unit here) of about
/// 0.6 s at n <= 64, growing with n up to about a second from n = 107 on, so that n = 256 stays
/// well under 2 s with its gradient phase and first descents.
search_plan plan_search(const problem& p, const assigner_options& options) {
  search_plan plan;
  plan.chains = std::clamp<std::size_t>(256 / std::max<std::size_t>(p.n, 1), 1, 8);
  if (options.search_rounds) { // as many rounds in all, none at all for 0
    const auto rounds = static_cast<std::size_t>(*options.search_rounds);
    plan.chains = std::clamp<std::size_t>(rounds, 1, plan.chains);
    plan.per_chain.rounds = rounds / plan.chains;
    return plan;
  }
  const double n = static_cast<double>(p.n);
  const double work = std::min(5e8, 3e8 * std::max(1.0, n / 64));
  plan.per_chain.work = static_cast<std::uint64_t>(work / static_cast<double>(plan.chains));
  return plan;
}

/// Iterated local search in independent chains from `start`, the best kept.
std::vector<std::size_t> best_of_chains(detail::placement_search& search,
                                        const std::vector<std::size_t>& start,
                                        const search_plan& plan, std::mt19937_64& rng) {
  std::vector<std::size_t> best;
  double best_cost = 0;
  for (std::size_t c = 0; c < plan.chains; ++c) {
    search.reset(start);
    search.iterate(plan.per_chain, rng);
    if (best.empty() || search.cost() < best_cost) {
      best = search.assignment();
      best_cost = search.cost();
    }
  }
  return best;
}

/// Up to this many placements, enumerating them all is cheaper than searching.
constexpr std::size_t max_enumerated = 1 << 16;

assignment finish(assignment out, const problem& p, const detail::placement_search& search,
                  gradient_run& seed_run) {
  out.device = search.assignment();
  for (auto j : out.device)
    out.device_name.push_back(p.device_names[j]);
  out.cost = detail::placement_cost(p, out.device);
  const auto loads = detail::device_loads(p, out.device);
  out.feasible = detail::fits(p, loads);
  for (std::size_t j = 0; j < p.m; ++j) {
    out.device_load_bytes.push_back(loads[j] * p.size_unit);
    out.device_capacity_bytes.push_back(p.capacity[j] * p.size_unit);
  }
  out.probabilities = softmax_rows(seed_run.logits);
  out.loss_trace = std::move(seed_run.trace);
  out.gradient_argmax = argmax_rows(seed_run.logits);
  return out;
}

} // namespace

assignment assign(const std::vector<module_spec>& modules, const std::vector<device_spec>& devices,
                  const std::vector<connection>& connections, const assigner_options& options) {
  const auto p = detail::make_problem(modules, devices, connections, options);
  assignment out;
  out.probabilities = xt::zeros<double>({p.n, p.m});
  if (p.n == 0) {
    out.device_load_bytes.assign(p.m, 0.0);
    for (double c : p.capacity)
      out.device_capacity_bytes.push_back(c * p.size_unit);
    return out;
  }
  check_capacity(p);

  std::mt19937_64 rng{options.seed};
  std::normal_distribution<double> normal;
  detail::placement_search search{p};
  std::optional<std::vector<std::size_t>> best;
  double best_cost = 0;
  gradient_run seed_run;

  const auto consider = [&](const std::vector<std::size_t>& start, const gradient_run* from) {
    search.reset(start);
    if (!search.repair())
      return;
    search.descend();
    if (!best || search.cost() < best_cost) {
      best = search.assignment();
      best_cost = search.cost();
      if (from != nullptr)
        seed_run = *from;
    }
  };

  for (int r = 0; r < options.restarts; ++r) {
    xt::xtensor<double, 2> start = xt::empty<double>({p.n, p.m});
    if (r == 0 && options.initial_logits)
      start = *options.initial_logits;
    else
      for (auto& z : start)
        z = normal(rng);
    auto run = run_gradient(p, std::move(start), options.iterations, options.update_rate);
    if (r == 0)
      seed_run = run;
    consider(argmax_rows(run.logits), &run);
  }
  bool exhausted = false;
  if (auto built = detail::construct_fitting(p, exhausted))
    consider(*built, nullptr);
  // Along the connections, one run per device: at n = 128 and 256 the search from there ended
  // 8 % lower than from the other starts (mean J against the 60 s search, three seeds).
  consider(detail::contiguous_runs(p), nullptr);
  if (!best)
    throw capacity_error(
      exhausted ? "no placement of the " + std::to_string(p.n) + " modules fits the devices' memory"
                : "found no placement of the " + std::to_string(p.n) +
                    " modules that fits the devices' memory (search limit reached)");

  // Few enough placements to try them all: the answer is then the optimum.
  if (auto optimum = detail::enumerate_best(p, max_enumerated)) {
    search.reset(*optimum);
    return finish(std::move(out), p, search, seed_run);
  }
  search.reset(best_of_chains(search, *best, plan_search(p, options), rng));

  return finish(std::move(out), p, search, seed_run);
}

model_assigner::model_assigner(std::vector<module_spec> modules, std::vector<device_spec> devices,
                               std::vector<connection> connections)
  : modules_(std::move(modules)), devices_(std::move(devices)),
    connections_(std::move(connections)) {}

assignment model_assigner::assign(const assigner_options& options) const {
  return troupe::assign(modules_, devices_, connections_, options);
}

double model_assigner::cost(const std::vector<std::size_t>& placement,
                            const assigner_options& options) const {
  const auto p = detail::make_problem(modules_, devices_, connections_, options);
  if (placement.size() != p.n)
    throw invalid_argument("placement has " + std::to_string(placement.size()) + " entries for " +
                           std::to_string(p.n) + " modules");
  for (std::size_t i = 0; i < placement.size(); ++i)
    if (placement[i] >= p.m)
      throw invalid_argument("placement[" + std::to_string(i) +
                             "] = " + std::to_string(placement[i]) + ", but there are " +
                             std::to_string(p.m) + " devices");
  return detail::placement_cost(p, placement);
}

} // namespace troupe
