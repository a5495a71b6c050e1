// The discrete search's kept swaps (assigner/src/search_swaps.cpp): after any sequence of moves,
// the best swap it keeps for each pair of devices is the best of the swaps between them that
// fit, as trying every pair of modules finds it.
#include "chain_model.hpp"
#include "problem.hpp"
#include "search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace troupe::detail {

/// What the test reaches inside placement_search.
struct placement_search_probe {
  static void move(placement_search& s, std::size_t i, std::size_t q) { s.move(i, q); }
  /// The best swap kept for each pair of devices p < q (at p * m + q; infinite when none fits).
  static std::vector<double> kept_swap_deltas(placement_search& s) {
    placement_search::candidate best{-std::numeric_limits<double>::infinity(), 0, 0, false, false};
    s.find_best_swap(best);
    std::vector<double> kept(s.m_ * s.m_, std::numeric_limits<double>::infinity());
    for (std::size_t p = 0; p < s.m_; ++p)
      for (std::size_t q = p + 1; q < s.m_; ++q)
        if (s.pair_best_[p * s.m_ + q].found)
          kept[p * s.m_ + q] = s.pair_best_[p * s.m_ + q].delta;
    return kept;
  }
};

namespace {

/// J's change for the best swap that fits between each pair of devices, by trying each pair of
/// modules on a copy of the placement.
std::vector<double> best_swaps_by_trying_all(const problem& p, std::vector<std::size_t> a) {
  const double before = placement_cost(p, a);
  std::vector<double> best(p.m * p.m, std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < p.n; ++i)
    for (std::size_t k = i + 1; k < p.n; ++k) {
      if (a[i] == a[k])
        continue;
      auto& pair = best[std::min(a[i], a[k]) * p.m + std::max(a[i], a[k])];
      std::swap(a[i], a[k]);
      if (fits(p, device_loads(p, a)))
        pair = std::min(pair, placement_cost(p, a) - before);
      std::swap(a[i], a[k]);
    }
  return best;
}

TEST(placement_search, kept_swaps_are_the_best_of_all_after_every_move) {
  auto model = chain_with_skips(64, 4);
  std::mt19937_64 rng{5};
  for (std::size_t i = 0; i < 64; ++i) // more links than a chain: moves reach further
    model.connections.push_back({i, static_cast<std::size_t>(rng() % 64), 3.0 * (1 << 20)});
  assigner_options options;
  // Uneven distances: with equal ones a move leaves its neighbours' swaps between other
  // devices unchanged, and the rescan of their rows would go untested.
  xt::xtensor<double, 2> distance = xt::zeros<double>({16, 16});
  for (std::size_t j = 0; j < 16; ++j)
    for (std::size_t l = j + 1; l < 16; ++l)
      distance(j, l) = distance(l, j) = 1 + static_cast<double>(rng() % 10);
  options.distance = distance;
  options.connection_weight = 50; // cuts as costly as imbalance
  const auto p = make_problem(model.modules, model.devices, model.connections, options);
  std::vector<std::size_t> a(p.n);
  for (std::size_t i = 0; i < p.n; ++i)
    a[i] = i * p.m / p.n;
  placement_search search{p};
  search.reset(a);
  ASSERT_TRUE(search.feasible());
  int compared = 0;
  for (int step = 0; step < 300; ++step) {
    const auto i = static_cast<std::size_t>(rng() % p.n);
    const auto q = static_cast<std::size_t>(rng() % p.m);
    a = search.assignment();
    a[i] = q;
    if (!fits(p, device_loads(p, a)))
      continue;
    placement_search_probe::move(search, i, q);
    const auto expected = best_swaps_by_trying_all(p, search.assignment());
    const auto kept = placement_search_probe::kept_swap_deltas(search);
    const double tolerance = 1e-9 * placement_cost(p, search.assignment());
    for (std::size_t x = 0; x < kept.size(); ++x)
      if (std::isinf(expected[x]))
        ASSERT_TRUE(std::isinf(kept[x])) << "step " << step << ", pair " << x;
      else
        ASSERT_NEAR(kept[x], expected[x], tolerance) << "step " << step << ", pair " << x;
    ++compared;
  }
  EXPECT_GT(compared, 100);
}

} // namespace
} // namespace troupe::detail

namespace troupe::detail {
namespace {

problem chain_problem(const std::vector<std::size_t>& along, std::vector<device_spec> devices,
                      std::vector<connection> extra = {}) {
  std::vector<module_spec> modules;
  for (std::size_t i = 0; i < along.size(); ++i)
    modules.push_back({"m" + std::to_string(i), 1 << 20, 1.0});
  for (std::size_t x = 1; x < along.size(); ++x)
    extra.push_back({along[x - 1], along[x], 1.0});
  return make_problem(modules, devices, extra, assigner_options{});
}

std::vector<device_spec> gpus(std::size_t count) {
  std::vector<device_spec> devices;
  for (std::size_t j = 0; j < count; ++j)
    devices.push_back({"cuda:" + std::to_string(j), device_kind::gpu, 1e12});
  return devices;
}

TEST(contiguous_runs, cut_the_modules_along_their_connections_into_equal_shares) {
  // The chain visits the modules in a scrambled index order: runs follow the chain.
  std::vector<std::size_t> along(12);
  for (std::size_t x = 0; x < along.size(); ++x)
    along[x] = (x * 5) % 12;
  const auto p = chain_problem(along, gpus(3));
  const auto a = contiguous_runs(p);
  for (std::size_t x = 0; x < along.size(); ++x)
    EXPECT_EQ(a[along[x]], x / 4) << "the " << x << "th module along the chain";
}

TEST(contiguous_runs, give_a_device_without_compute_nothing_and_survive_a_cycle) {
  auto devices = gpus(2);
  devices.push_back({"cpu", device_kind::cpu, 1e12}); // power 0 (machin's cpu_weight)
  std::swap(devices[1], devices[2]);
  const auto p = chain_problem({0, 1, 2, 3, 4, 5}, devices, {{5, 0, 1.0}}); // 5 -> 0 closes it
  const auto a = contiguous_runs(p);
  const std::vector<std::size_t> expected{0, 0, 0, 2, 2, 2};
  EXPECT_EQ(a, expected);
}

} // namespace
} // namespace troupe::detail
