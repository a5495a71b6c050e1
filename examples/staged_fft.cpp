// staged_fft: PhiML's parallel_compute docstring example in troupe. A batch of 16 noisy signals;
// each signal's power spectrum is computed on a worker process (its slice of the batch), then
// the mean spectrum over the batch on this process, and the peak frequency from it. The
// spectra (1 KiB each) do not fit the (tiny) memory limit, so the workers leave them in HDF5 files,
// which this process reads back when it needs them.
//
//   build/examples/staged_fft
#include "troupe/pools/process_pool.hpp"
#include "troupe/staged/disk_cache.hpp"
#include "troupe/staged/parallel_compute.hpp"

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xrandom.hpp>
#include <xtensor/xsort.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numbers>
#include <string>

namespace staged = troupe::staged;
using staged::tensor;

namespace {

constexpr std::size_t samples = 256;

/// |DFT|^2 of one signal (a slice: the batch dim is gone), by the definition: the example's
/// point is where it runs, not how fast one transform is.
tensor power_spectrum(const staged::record& r) {
  const auto& signal = r.get("signal").values();
  xt::xarray<double> power = xt::zeros<double>({samples / 2});
  for (std::size_t k = 0; k < samples / 2; ++k) {
    double re = 0, im = 0;
    for (std::size_t n = 0; n < samples; ++n) {
      const double angle = -2 * std::numbers::pi * double(k * n) / samples;
      re += signal(n) * std::cos(angle);
      im += signal(n) * std::sin(angle);
    }
    power(k) = re * re + im * im;
  }
  return {power, {staged::spatial("frequency", samples / 2)}};
}

/// The mean over the batch: needs the whole batch, so it runs here.
tensor mean_spectrum(const staged::record& r) {
  const auto& spectra = r.get("spectrum");
  const auto axis = spectra.dims().index_of("signal");
  return {xt::mean(spectra.values(), {axis}),
          spectra.dims().without(staged::dim_filter::names({"signal"}))};
}

tensor peak(const staged::record& r) {
  return tensor::scalar(double(xt::argmax(r.get("mean_spectrum").values())()));
}

// Registered at namespace scope: the worker processes run this program and find it by name.
// snippet-begin: schema
const auto spectra_schema = staged::register_schema(
  staged::schema{"spectra"}
    .field("signal")
    .property({.name = "spectrum", .field_deps = {"signal"}, .compute = power_spectrum})
    .property({.name = "mean_spectrum",
               .property_deps = {"spectrum"},
               .required_dims = staged::dim_filter::kind(staged::dim_kind::batch),
               .compute = mean_spectrum})
    .property({.name = "peak",
               .property_deps = {"mean_spectrum"},
               .required_dims = staged::dim_filter::all(),
               .compute = peak}));
// snippet-end: schema

/// 16 signals: a sine of frequency 12 (in cycles a window) plus noise.
tensor noisy_signals() {
  xt::random::seed(7);
  const auto t = xt::arange<double>(samples);
  xt::xarray<double> signals = xt::random::randn<double>({std::size_t{16}, samples}, 0.0, 0.5);
  signals += xt::sin(2 * std::numbers::pi * 12.0 * t / double(samples));
  return {signals, {staged::batch("signal", 16), staged::spatial("time", samples)}};
}

} // namespace

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv}; // a worker process never gets past this line
  troupe::process_pool pool{rt, {.workers = 2}};
  const auto cache =
    std::filesystem::temp_directory_path() / ("troupe-staged-fft-" + std::to_string(::getpid()));
  int loads = 0;
  const auto counting = staged::on_load_into_memory([&](const staged::file_ref&) { ++loads; });

  // snippet-begin: compute
  staged::record r{spectra_schema, {{"signal", noisy_signals()}}};
  const auto plan =
    parallel_compute(r, {"peak", "spectrum"}, {.memory_limit = 1024, .cache_dir = cache}, pool);
  // snippet-end: compute
  for (const auto& st : plan.stages) {
    std::string names;
    for (const auto& name : st.properties)
      names += (names.empty() ? "" : ", ") + name;
    std::printf("stage: %-22s %s\n", names.c_str(),
                st.on_host() ? "on this process" : ("over " + st.distributed.describe()).c_str());
  }
  const auto files = staged::get_cache_files(r);
  std::printf("spectra on disk: %s, in %zu HDF5 files; read back %d times\n",
              r.get("spectrum").available() ? "no" : "yes", files.size(), loads);
  const double frequency = r.get("peak").values()();
  std::printf("peak frequency: %.0f cycles a window\n", frequency);
  std::filesystem::remove_all(cache);
  return frequency == 12.0 && !files.empty() ? 0 : 1;
}
