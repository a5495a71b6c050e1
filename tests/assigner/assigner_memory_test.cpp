// The assigner's memory is linear in the modules and the connections (issue 15): a model has
// O(n) connections, and an n x n table of doubles would be 32 MiB at n = 2,048, 128 MiB at
// 4,096. Watched through a replaced operator new, in a binary of its own.
#include "../allocation_counter.hpp"
#include "chain_model.hpp"

#include "troupe/assigner/assigner.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

namespace troupe {
namespace {

/// The most memory assign() held at once for a chain of n modules on 16 devices, beyond what
/// was live before. A few rounds of search and a start near a fitting placement: what is
/// measured is the data structures, not the search.
std::size_t peak_of_assign(std::size_t n) {
  const auto model = chain_with_skips(n, 5);
  assigner_options options;
  options.iterations = 1;
  options.search_rounds = 1;
  xt::xtensor<double, 2> logits = xt::zeros<double>({n, model.devices.size()});
  for (std::size_t i = 0; i < n; ++i) // contiguous runs of modules, device by device
    logits(i, i * model.devices.size() / n) = 10;
  options.initial_logits = std::move(logits);
  testing::reset_peak();
  const auto before = testing::live_bytes();
  const auto a = assign(model.modules, model.devices, model.connections, options);
  EXPECT_TRUE(a.feasible) << n;
  return testing::peak_bytes() - before;
}

TEST(assigner_memory, grows_linearly_with_the_modules) {
  const auto at_1024 = peak_of_assign(1024);
  const auto at_2048 = peak_of_assign(2048);
  RecordProperty("peak_bytes_n1024", std::to_string(at_1024));
  RecordProperty("peak_bytes_n2048", std::to_string(at_2048));
  // n x m tables of doubles (16 devices): 128 KiB each at n = 1,024, a few dozen of them.
  EXPECT_LT(at_2048, std::size_t{16} << 20) << "a dense n x n table alone would be 32 MiB";
  // Quadratic memory would grow four times from n = 1,024 to 2,048.
  EXPECT_LT(static_cast<double>(at_2048), 2.5 * static_cast<double>(at_1024))
    << at_1024 << " bytes at n = 1,024, " << at_2048 << " at 2,048";
}

} // namespace
} // namespace troupe
