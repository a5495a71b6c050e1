// Place a transformer exported by PyTorch onto 4 GPUs and a CPU, one module per encoder layer.
// The model (data/onnx/encoder_dynamic.onnx, made by tools/export_onnx_models.py) has dynamic
// batch and sequence axes: the batch takes batch_size, the sequence length is given by name, as
// troupe-assign's `--dim seq=128` would.
//
//   ./build/examples/assign_onnx_model                       # the bundled export, seq 128
//   ./build/examples/assign_onnx_model my_model.onnx seq=512 # yours: every symbolic dim NAME=SIZE
#include <troupe/assigner/assigner.hpp>
#include <troupe/assigner/onnx_model.hpp>
#include <troupe/troupe.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  constexpr double mib = 1 << 20;
  troupe::onnx_options options{.group_depth = 3,
                               .batch_size = 8}; // "/enc/layers.3/..." -> enc.layers.3
  const std::string path = argc > 1 ? argv[1] : TROUPE_EXAMPLE_ONNX_MODEL;
  if (argc <= 2)
    options.dims["seq"] = 128;
  for (int i = 2; i < argc; ++i) {
    const std::string dim = argv[i];
    const auto at = dim.find('=');
    if (at == std::string::npos) {
      std::fprintf(stderr, "'%s' is not NAME=SIZE\n", argv[i]);
      return 2;
    }
    options.dims[dim.substr(0, at)] = std::stoll(dim.substr(at + 1));
  }
  // snippet-begin: place
  const auto model = troupe::model_from_onnx(path, options);
  for (const auto& warning : model.warnings)
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  std::printf("%zu modules, %zu connections, %.1f MiB of weights\n", model.modules.size(),
              model.connections.size(), model.parameter_bytes / mib);

  std::vector<troupe::device_spec> devices;
  for (int g = 0; g < 4; ++g)
    devices.push_back({"cuda:" + std::to_string(g), troupe::device_kind::gpu, 64 * mib});
  devices.push_back({"cpu", troupe::device_kind::cpu, 1024 * mib});

  troupe::assigner_options placement; // machin's: sizes doubled, half of each device usable
  placement.seed = 1;
  const auto placed = troupe::assign(model.modules, devices, model.connections, placement);
  // snippet-end: place
  for (std::size_t i = 0; i < model.modules.size(); ++i)
    std::printf("%-14s %6.1f MiB %8.1f MFLOP  -> %s\n", model.modules[i].name.c_str(),
                model.modules[i].size_bytes / mib, *model.modules[i].complexity / 1e6,
                placed.device_name[i].c_str());
  for (std::size_t j = 0; j < devices.size(); ++j)
    std::printf("%-7s %6.1f of %6.1f MiB\n", devices[j].name.c_str(),
                placed.device_load_bytes[j] / mib, placed.device_capacity_bytes[j] / mib);
  std::printf("%s, cost %.4g\n", placed.feasible ? "fits" : "DOES NOT FIT", placed.cost);
  return placed.feasible ? 0 : 1;
}
