// The assigner at issue 15's scale: 1,024 modules on 16 devices.
#include "troupe/assigner/assigner.hpp"

#include <gtest/gtest.h>

#include <random>

namespace troupe {
namespace {

struct big_model {
  std::vector<module_spec> modules;
  std::vector<device_spec> devices;
  std::vector<connection> connections;
};

/// A chain of `n` modules of 10-100 MiB with a skip connection every fourth, on 15 GPUs and a
/// CPU with room for about twice the model.
big_model chain_with_skips(std::size_t n, std::uint64_t seed) {
  constexpr double mib = 1 << 20;
  std::mt19937_64 rng{seed};
  std::uniform_real_distribution<double> size{10 * mib, 100 * mib};
  big_model m;
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    m.modules.push_back({"m" + std::to_string(i), size(rng), std::nullopt});
    total += m.modules.back().size_bytes;
    if (i > 0)
      m.connections.push_back({i - 1, i, 8 * mib});
    if (i >= 4 && i % 4 == 0)
      m.connections.push_back({i - 4, i, 2 * mib});
  }
  // machin's defaults double the sizes and use half of each device: 4x the model in all.
  for (int j = 0; j < 15; ++j)
    m.devices.push_back({"cuda:" + std::to_string(j), device_kind::gpu, 8 * total / 16});
  m.devices.push_back({"cpu", device_kind::cpu, 8 * total / 16});
  return m;
}

TEST(assigner_scale, a_thousand_modules_on_sixteen_devices_fit) {
  const auto m = chain_with_skips(1024, 1);
  const auto a = assign(m.modules, m.devices, m.connections);
  ASSERT_EQ(a.device.size(), 1024u);
  EXPECT_TRUE(a.feasible);
  for (std::size_t j = 0; j < m.devices.size(); ++j)
    EXPECT_LE(a.device_load_bytes[j], a.device_capacity_bytes[j] * (1 + 1e-12)) << j;
}

TEST(assigner_scale, the_same_seed_gives_the_same_placement_at_scale) {
  const auto m = chain_with_skips(1024, 2);
  assigner_options options;
  options.iterations = 50; // the search's paths, at a tenth of the default's time
  options.search_rounds = 3;
  options.seed = 7;
  const auto first = assign(m.modules, m.devices, m.connections, options);
  const auto second = assign(m.modules, m.devices, m.connections, options);
  EXPECT_EQ(first.device, second.device);
  EXPECT_EQ(first.cost, second.cost);
  EXPECT_TRUE(first.feasible);
}

} // namespace
} // namespace troupe
