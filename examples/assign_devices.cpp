// Describe a small model, let troupe's assigner place it on this machine's devices (or on an
// imagined pair of GPUs when there is none), and print where each module goes.
//
//   ./build/examples/assign_devices
#include <troupe/assigner/assigner.hpp>
#include <troupe/assigner/devices.hpp>
#include <troupe/troupe.hpp>

#include <cstdio>
#include <vector>

int main() {
  constexpr double mib = 1 << 20;
  // A transformer-ish stack: embedding, four blocks, head. Sizes are parameter bytes (the
  // assigner doubles them, machin's size_multiplier, to leave room for activations).
  // snippet-begin: assign
  std::vector<troupe::module_spec> modules{{"embedding", 400 * mib}, {"block0", 900 * mib},
                                           {"block1", 900 * mib},    {"block2", 900 * mib},
                                           {"block3", 900 * mib},    {"head", 400 * mib}};
  // Activations flow block to block (bytes per step), plus a residual from the embedding to
  // the head.
  std::vector<troupe::connection> flows{{0, 1, 64 * mib}, {1, 2, 64 * mib}, {2, 3, 64 * mib},
                                        {3, 4, 64 * mib}, {4, 5, 64 * mib}, {0, 5, 8 * mib}};

  auto devices = troupe::local_devices(); // NVIDIA GPUs (if NVML is there), then the CPU
  if (devices.size() == 1) {
    std::printf("no GPU found; placing onto two imagined 8 GiB GPUs and this CPU\n");
    devices.insert(devices.begin(), {{"cuda:0", troupe::device_kind::gpu, 8192 * mib},
                                     {"cuda:1", troupe::device_kind::gpu, 8192 * mib}});
  }

  troupe::assigner_options options; // machin's defaults; CPUs get cpu_weight 0 of the compute
  options.seed = 1;
  const auto placement = troupe::assign(modules, devices, flows, options);

  for (std::size_t i = 0; i < modules.size(); ++i)
    std::printf("%-10s -> %s\n", modules[i].name.c_str(), placement.device_name[i].c_str());
  // snippet-end: assign
  std::printf("\n");
  for (std::size_t j = 0; j < devices.size(); ++j)
    std::printf("%-8s holds %7.0f MiB of %8.0f MiB usable\n", devices[j].name.c_str(),
                placement.device_load_bytes[j] / mib, placement.device_capacity_bytes[j] / mib);
  std::printf("\ncost %.4g; machin's own argmax would have been:", placement.cost);
  for (auto j : placement.gradient_argmax)
    std::printf(" %s", devices[j].name.c_str());
  std::printf("\n");
}
