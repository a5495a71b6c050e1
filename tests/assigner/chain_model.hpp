// A model as large as a test wants: a chain of modules with skip connections, on 16 devices.
#pragma once

#include "troupe/assigner/specs.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace troupe {

struct big_model {
  std::vector<module_spec> modules;
  std::vector<device_spec> devices;
  std::vector<connection> connections;
};

/// A chain of `n` modules of 10-100 MiB with a skip connection every fourth, on 15 GPUs and a
/// CPU with room for about twice the model.
inline big_model chain_with_skips(std::size_t n, std::uint64_t seed) {
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

} // namespace troupe
