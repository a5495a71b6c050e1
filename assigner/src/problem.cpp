#include "problem.hpp"

#include "troupe/actors/error.hpp"

#include <xtensor/xadapt.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace troupe::detail {

namespace {

std::string at(const char* field, std::size_t index, const char* member) {
  return std::string{field} + "[" + std::to_string(index) + "]." + member;
}

/// Finite and >= 0, else an invalid_argument naming the field and the value.
double non_negative(double value, const std::string& field) {
  if (!std::isfinite(value) || value < 0)
    throw troupe::invalid_argument(field + " must be a finite number >= 0, got " +
                                   std::to_string(value));
  return value;
}

double positive(double value, const std::string& field) {
  if (!std::isfinite(value) || value <= 0)
    throw troupe::invalid_argument(field + " must be a finite number > 0, got " +
                                   std::to_string(value));
  return value;
}

xt::xtensor<double, 2> normalised(const xt::xtensor<double, 2>& x) {
  double total = 0;
  for (double v : x)
    total += v;
  return total > 0 ? xt::xtensor<double, 2>(x / total) : xt::xtensor<double, 2>(xt::zeros_like(x));
}

/// p.links from p.connections: each connection i -> k (i != k) as a link of i and one of k,
/// repeats merged, weights divided by `total` (the sum over all connections, self ones too,
/// as machin normalises before zeroing the diagonal).
void link_modules(problem& p, double total) {
  std::vector<std::pair<std::size_t, link>> halves; // (module, its link)
  if (total > 0)
    for (const auto& c : p.connections)
      if (c.from != c.to && c.weight != 0) {
        halves.push_back({c.from, link{c.to, c.weight / total, 0}});
        halves.push_back({c.to, link{c.from, 0, c.weight / total}});
      }
  std::sort(halves.begin(), halves.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : x.second.other < y.second.other;
  });
  p.link_begin.assign(p.n + 1, 0);
  for (std::size_t x = 0; x < halves.size(); ++x) {
    const auto& [i, l] = halves[x];
    if (x > 0 && halves[x - 1].first == i && halves[x - 1].second.other == l.other) {
      p.links.back().out += l.out;
      p.links.back().in += l.in;
    } else {
      p.links.push_back(l);
    }
    p.link_begin[i + 1] = p.links.size();
  }
  for (std::size_t i = 0; i < p.n; ++i) // modules without links end where the one before does
    p.link_begin[i + 1] = std::max(p.link_begin[i + 1], p.link_begin[i]);
}

std::vector<double> normalised(const std::vector<double>& x) {
  double total = 0;
  for (double v : x)
    total += v;
  std::vector<double> out(x.size(), 0.0);
  if (total > 0)
    for (std::size_t i = 0; i < x.size(); ++i)
      out[i] = x[i] / total;
  return out;
}

xt::xtensor<double, 2> distances(const std::vector<device_spec>& devices,
                                 const assigner_options& options) {
  const auto m = devices.size();
  if (options.distance) {
    const auto& d = *options.distance;
    if (d.shape(0) != m || d.shape(1) != m)
      throw troupe::invalid_argument("assigner_options::distance is " + std::to_string(d.shape(0)) +
                                     "x" + std::to_string(d.shape(1)) + ", expected " +
                                     std::to_string(m) + "x" + std::to_string(m) +
                                     " (one row and column per device)");
    for (std::size_t a = 0; a < m; ++a)
      for (std::size_t b = 0; b < m; ++b)
        non_negative(d(a, b), "assigner_options::distance(" + std::to_string(a) + ", " +
                                std::to_string(b) + ")");
    return d;
  }
  // machin: CPU-GPU pairs are cpu_gpu_distance apart, two different GPUs gpu_gpu_distance,
  // anything else (a CPU and a CPU, a GPU and itself) 0.
  xt::xtensor<double, 2> d = xt::zeros<double>({m, m});
  for (std::size_t a = 0; a < m; ++a)
    for (std::size_t b = 0; b < m; ++b) {
      const bool gpu_a = devices[a].kind == device_kind::gpu;
      const bool gpu_b = devices[b].kind == device_kind::gpu;
      if (gpu_a != gpu_b)
        d(a, b) = options.cpu_gpu_distance;
      else if (gpu_a && devices[a].name != devices[b].name)
        d(a, b) = options.gpu_gpu_distance;
    }
  return d;
}

} // namespace

problem make_problem(const std::vector<module_spec>& modules,
                     const std::vector<device_spec>& devices,
                     const std::vector<connection>& connections, const assigner_options& options) {
  if (devices.empty())
    throw troupe::invalid_argument("devices is empty: there is nowhere to place the modules");
  positive(options.size_multiplier, "assigner_options::size_multiplier");
  positive(options.max_mem_ratio, "assigner_options::max_mem_ratio");
  positive(options.size_unit_bytes, "assigner_options::size_unit_bytes");
  non_negative(options.cpu_weight, "assigner_options::cpu_weight");
  non_negative(options.gpu_gpu_distance, "assigner_options::gpu_gpu_distance");
  non_negative(options.cpu_gpu_distance, "assigner_options::cpu_gpu_distance");
  non_negative(options.connection_weight, "assigner_options::connection_weight");
  non_negative(options.size_match_weight, "assigner_options::size_match_weight");
  non_negative(options.complexity_match_weight, "assigner_options::complexity_match_weight");
  non_negative(options.entropy_weight, "assigner_options::entropy_weight");
  positive(options.update_rate, "assigner_options::update_rate");
  if (options.iterations < 0)
    throw troupe::invalid_argument("assigner_options::iterations must be >= 0, got " +
                                   std::to_string(options.iterations));
  if (options.restarts < 1)
    throw troupe::invalid_argument("assigner_options::restarts must be >= 1, got " +
                                   std::to_string(options.restarts));
  if (options.search_rounds && *options.search_rounds < 0)
    throw troupe::invalid_argument("assigner_options::search_rounds must be >= 0, got " +
                                   std::to_string(*options.search_rounds));

  problem p;
  p.n = modules.size();
  p.m = devices.size();
  p.size_unit = options.size_unit_bytes;
  if (options.initial_logits &&
      (options.initial_logits->shape(0) != p.n || options.initial_logits->shape(1) != p.m))
    throw troupe::invalid_argument(
      "assigner_options::initial_logits is " + std::to_string(options.initial_logits->shape(0)) +
      "x" + std::to_string(options.initial_logits->shape(1)) + ", expected " + std::to_string(p.n) +
      "x" + std::to_string(p.m) + " (modules x devices)");

  std::vector<double> complexity(p.n);
  for (std::size_t i = 0; i < p.n; ++i) {
    const auto bytes = non_negative(modules[i].size_bytes, at("modules", i, "size_bytes"));
    p.size.push_back(bytes * options.size_multiplier / options.size_unit_bytes);
    // machin takes a module's complexity to be its (multiplied) size
    complexity[i] = modules[i].complexity
                      ? non_negative(*modules[i].complexity, at("modules", i, "complexity"))
                      : p.size[i];
  }
  std::vector<double> power(p.m);
  for (std::size_t j = 0; j < p.m; ++j) {
    const auto& d = devices[j];
    p.device_names.push_back(d.name);
    p.capacity.push_back(
      non_negative(d.memory_capacity_bytes, at("devices", j, "memory_capacity_bytes")) *
      options.max_mem_ratio / options.size_unit_bytes);
    power[j] = d.compute_power ? non_negative(*d.compute_power, at("devices", j, "compute_power"))
                               : (d.kind == device_kind::cpu ? options.cpu_weight : 1.0);
  }

  double c_total = 0;
  for (std::size_t e = 0; e < connections.size(); ++e) {
    const auto& x = connections[e];
    if (x.from >= p.n || x.to >= p.n)
      throw troupe::invalid_argument(
        "connections[" + std::to_string(e) + "] joins module " + std::to_string(x.from) +
        " to module " + std::to_string(x.to) + ", but there are " + std::to_string(p.n) +
        " modules (indices 0.." + std::to_string(p.n == 0 ? 0 : p.n - 1) + ")");
    c_total += non_negative(x.weight, at("connections", e, "weight"));
  }
  p.connections = connections;
  link_modules(p, c_total);
  const auto d = distances(devices, options);

  p.tensors.model_size = xt::adapt(p.size, {p.n});
  p.tensors.size_capacity = xt::adapt(p.capacity, {p.m});
  p.tensors.model_complexity = xt::adapt(complexity, {p.n});
  p.tensors.complexity_capacity = xt::adapt(power, {p.m});
  p.tensors.device_distance = d;
  p.weights = {options.connection_weight, options.size_match_weight,
               options.complexity_match_weight, options.entropy_weight};

  p.dhat = normalised(d);
  p.qhat = normalised(complexity);
  p.phat = normalised(power);
  double q_total = 0, p_total = 0;
  for (double v : complexity)
    q_total += v;
  for (double v : power)
    p_total += v;
  p.balance = q_total > 0 && p_total > 0;
  return p;
}

double placement_cost(const problem& p, const std::vector<std::size_t>& a) {
  double conn = 0;
  for (std::size_t i = 0; i < p.n; ++i)
    for (const auto& l : p.links_of(i))
      conn += l.out * p.dhat(a[i], a[l.other]);
  conn /= static_cast<double>(p.n * p.n);
  double bal = 0;
  if (p.balance) {
    std::vector<double> share(p.m, 0.0);
    for (std::size_t i = 0; i < p.n; ++i)
      share[a[i]] += p.qhat[i];
    for (std::size_t j = 0; j < p.m; ++j)
      bal += (share[j] - p.phat[j]) * (share[j] - p.phat[j]);
    bal /= static_cast<double>(p.m);
  }
  return p.weights.connection * conn + p.weights.complexity_match * bal;
}

std::vector<double> device_loads(const problem& p, const std::vector<std::size_t>& a) {
  std::vector<double> load(p.m, 0.0);
  for (std::size_t i = 0; i < p.n; ++i)
    load[a[i]] += p.size[i];
  return load;
}

bool fits(const problem& p, const std::vector<double>& loads) {
  for (std::size_t j = 0; j < p.m; ++j)
    if (loads[j] > p.capacity[j] * (1 + 1e-12))
      return false;
  return true;
}

} // namespace troupe::detail
