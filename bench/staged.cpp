// bench/staged: parallel_compute with 2 worker processes against the same properties computed
// on this process (max_workers = 0), interleaved in one run.
//
//   build/bench/staged [rounds]
//
// The heavy record: a batch of 64, each slice a fixed amount of CPU work (a dependent LCG chain
// of about 20 ms here: iterations, not a spin on the clock), then the batch's mean on the host.
// The trivial record: a batch of 1,024 slices of one number each, doubled: the time a slice
// costs parallel_compute when its work costs nothing (cutting, sending, running, returning,
// stacking). Medians over the rounds. The last lines are `name value unit`, read by tooling.
#include "median.hpp"

#include "troupe/pools/process_pool.hpp"
#include "troupe/staged/parallel_compute.hpp"

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace staged = troupe::staged;
using staged::tensor;

namespace {

constexpr std::uint64_t heavy_iterations = 20'000'000; // about 20 ms here

/// Each seed's work: a chain no compiler folds. A slice has one seed; the host, the batch.
tensor heavy(const staged::record& r) {
  const auto& seeds = r.get("seed");
  xt::xarray<double> out = xt::zeros_like(seeds.values());
  for (std::size_t s = 0; s < out.size(); ++s) {
    auto x = static_cast<std::uint64_t>(seeds.values().flat(s));
    for (std::uint64_t i = 0; i < heavy_iterations; ++i)
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    out.flat(s) = static_cast<double>(x % 1000);
  }
  return {out, seeds.dims()};
}

tensor batch_mean(const staged::record& r) {
  return tensor::scalar(xt::mean(r.get("work").values())());
}

tensor doubled(const staged::record& r) {
  return {2.0 * r.get("seed").values(), r.get("seed").dims()};
}

const auto bench_schema = staged::register_schema(
  staged::schema{"staged_bench"}
    .field("seed")
    .property({.name = "work", .field_deps = {"seed"}, .compute = heavy})
    .property({.name = "mean",
               .property_deps = {"work"},
               .required_dims = staged::dim_filter::all(),
               .compute = batch_mean})
    .property({.name = "doubled", .field_deps = {"seed"}, .compute = doubled}));

using clock_type = std::chrono::steady_clock;

using troupe::bench::median;

/// Seconds for one parallel_compute of `property` over a fresh record of `slices`.
double time_compute(troupe::process_pool& pool, std::size_t slices, const char* property,
                    std::size_t workers) {
  staged::record r{
    bench_schema,
    {{"seed", tensor{xt::arange<double>(double(slices)), {staged::batch("slice", slices)}}}}};
  const auto start = clock_type::now();
  parallel_compute(r, {property}, {.max_workers = workers}, pool);
  const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  if (!r.is_cached(property))
    std::abort();
  return seconds;
}

} // namespace

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv}; // the pool's worker processes start here too
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  troupe::process_pool pool{rt, {.workers = 2}};
  (void)time_compute(pool, 1024, "doubled", 2); // warm: workers started
  std::vector<double> host, workers, trivial_host, trivial_workers;
  for (int round = 0; round < rounds; ++round) {
    host.push_back(time_compute(pool, 64, "mean", 0));
    workers.push_back(time_compute(pool, 64, "mean", 2));
    trivial_host.push_back(time_compute(pool, 1024, "doubled", 0));
    trivial_workers.push_back(time_compute(pool, 1024, "doubled", 2));
  }
  const double h = median(host), w = median(workers);
  const double per_slice_us = median(trivial_workers) / 1024 * 1e6;
  std::printf("staged: %d rounds, medians\n", rounds);
  std::printf("64 slices of ~20 ms + a host mean: %.1f ms on this process, %.1f ms on 2 "
              "workers\n",
              h * 1e3, w * 1e3);
  std::printf("1,024 trivial slices: %.2f ms on this process, %.2f ms on 2 workers\n",
              median(trivial_host) * 1e3, median(trivial_workers) * 1e3);
  std::printf("staged_speedup_2_workers %.2f x\n", h / w);
  std::printf("staged_overhead_per_slice_us %.1f us\n", per_slice_us);
  return 0;
}
