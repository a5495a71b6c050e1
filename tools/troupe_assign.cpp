// troupe-assign: place a model's modules onto devices, from an instance file or an ONNX model,
// and show where.
//
//   troupe-assign data/assigner/instances/n16_m4_tight_cpu_s0.json
//   troupe-assign --format json INSTANCE.json          # {"assignment": [...], "cost": ..., ...}
//   troupe-assign --dot placement.dot INSTANCE.json    # then: dot -Tpng placement.dot > p.png
//   troupe-assign model.onnx --batch-size 8 --devices local   # or devices.json; modules: the
//                                                             # model's repeated blocks
//   troupe-assign gpt2.onnx --dim seq=512 --group-depth 0     # a symbolic dim; one per operator
#include <troupe/actors/error.hpp>
#include <troupe/assigner/assigner.hpp>
#include <troupe/assigner/devices.hpp>
#include <troupe/assigner/instance_file.hpp>
#include <troupe/assigner/onnx_model.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>

namespace {

/// The widest of `header` and every text `of(i)` gives for i below `count`.
template <class Of>
int width_of(const char* header, std::size_t count, Of of) {
  std::size_t widest = std::string_view{header}.size();
  for (std::size_t i = 0; i < count; ++i)
    widest = std::max(widest, std::string_view{of(i)}.size());
  return static_cast<int>(widest);
}

void print_text(const troupe::placement_instance& instance, const troupe::assignment& a,
                double wall_ms) {
  std::printf("%s: %zu modules on %zu devices\n", instance.name.c_str(), instance.modules.size(),
              instance.devices.size());
  const int module_width = width_of("module", instance.modules.size(),
                                    [&](std::size_t i) { return instance.modules[i].name; });
  const int device_width = width_of("device", instance.devices.size(),
                                    [&](std::size_t j) { return instance.devices[j].name; });
  std::printf("%-*s  %-*s  %12s\n", module_width, "module", device_width, "device", "size (MiB)");
  for (std::size_t i = 0; i < a.device.size(); ++i)
    std::printf("%-*s  %-*s  %12.1f\n", module_width, instance.modules[i].name.c_str(),
                device_width, a.device_name[i].c_str(),
                instance.modules[i].size_bytes * instance.options.size_multiplier / (1 << 20));
  // Each device's share of the compute (complexities; a module's size when it has none).
  std::vector<double> compute(instance.devices.size(), 0.0);
  for (std::size_t i = 0; i < a.device.size(); ++i)
    compute[a.device[i]] += instance.modules[i].complexity.value_or(instance.modules[i].size_bytes);
  const double total = std::accumulate(compute.begin(), compute.end(), 0.0);
  std::printf("\n%-*s  %12s  %12s  %6s  %7s\n", device_width, "device", "load (MiB)",
              "usable (MiB)", "used", "compute");
  for (std::size_t j = 0; j < instance.devices.size(); ++j)
    std::printf(
      "%-*s  %12.1f  %12.1f  %5.1f%%  %6.1f%%\n", device_width, instance.devices[j].name.c_str(),
      a.device_load_bytes[j] / (1 << 20), a.device_capacity_bytes[j] / (1 << 20),
      a.device_capacity_bytes[j] > 0 ? 100 * a.device_load_bytes[j] / a.device_capacity_bytes[j]
                                     : 0.0,
      total > 0 ? 100 * compute[j] / total : 0.0);
  std::printf("\ncost %.9g  (%s)  in %.1f ms\n", a.cost,
              a.feasible ? "fits every device" : "DOES NOT FIT", wall_ms);
}

void print_json(const troupe::placement_instance& instance, const troupe::assignment& a,
                double wall_ms) {
  nlohmann::json out;
  out["assignment"] = a.device;
  std::vector<std::string> modules;
  for (const auto& m : instance.modules)
    modules.push_back(m.name);
  out["module_names"] = modules;
  out["device_names"] = a.device_name;
  out["cost"] = a.cost;
  out["feasible"] = a.feasible;
  out["device_load_bytes"] = a.device_load_bytes;
  out["device_capacity_bytes"] = a.device_capacity_bytes;
  out["gradient_argmax"] = a.gradient_argmax;
  out["wall_ms"] = wall_ms;
  std::cout << out.dump() << '\n';
}

void write_dot(const std::string& path, const troupe::placement_instance& instance,
               const troupe::assignment& a) {
  static constexpr std::array colours{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  std::ofstream dot{path};
  if (!dot)
    throw troupe::invalid_argument("cannot write " + path);
  dot << "digraph placement {\n  rankdir=LR;\n  node [style=filled, fontcolor=white];\n";
  for (std::size_t j = 0; j < instance.devices.size(); ++j) {
    dot << "  subgraph cluster_" << j << " {\n    label=\"" << instance.devices[j].name
        << "\";\n    color=\"" << colours[j % colours.size()] << "\";\n";
    for (std::size_t i = 0; i < a.device.size(); ++i)
      if (a.device[i] == j)
        dot << "    \"" << instance.modules[i].name << "\" [fillcolor=\""
            << colours[j % colours.size()] << "\"];\n";
    dot << "  }\n";
  }
  for (const auto& c : instance.connections)
    if (c.from != c.to)
      dot << "  \"" << instance.modules[c.from].name << "\" -> \"" << instance.modules[c.to].name
          << "\";\n";
  dot << "}\n";
}

/// Which depth troupe-assign picked for `model`'s modules, and why, for the user to see.
std::string grouping_said(const troupe::onnx_model& model) {
  const auto depth = " (--group-depth " + std::to_string(model.group_depth) + ")";
  const auto per_operator = "; --group-depth 0 gives one module per operator";
  if (model.repeated_blocks.size() == 2)
    return "modules: the model's repeated blocks, " + model.repeated_blocks[0] + ", " +
           model.repeated_blocks[1] + ", ..." + depth + per_operator;
  return "modules: the model's top-level parts" + depth + ", as it repeats no block" + per_operator;
}

/// An ONNX model as an instance: its modules and connections, on `devices` ("local" or a
/// devices file), with the assigner's default options.
troupe::placement_instance onnx_instance(const std::string& path, const troupe::onnx_options& o,
                                         const std::string& devices) {
  auto model = troupe::model_from_onnx(path, o);
  for (const auto& warning : model.warnings)
    std::cerr << "troupe-assign: warning: " << warning << "\n";
  if (!o.group_depth) // said on stderr: --format json keeps stdout to its one object
    std::cerr << "troupe-assign: " << grouping_said(model) << "\n";
  troupe::placement_instance instance;
  instance.name = path;
  instance.modules = std::move(model.modules);
  instance.connections = std::move(model.connections);
  instance.devices = devices == "local" ? troupe::local_devices() : troupe::load_devices(devices);
  return instance;
}

bool is_onnx(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"Place a model's modules onto devices (troupe's assigner)."};
  app.footer(R"(Examples:
  An instance file (data/assigner/instances):
    troupe-assign data/assigner/instances/n16_m4_tight_cpu_s0.json
    troupe-assign --format json --dot placement.dot INSTANCE.json   # then dot -Tpng ...
  An ONNX model (PyTorch's torch.onnx.export), on this machine's devices or a devices file:
    troupe-assign data/onnx/encoder_static.onnx                  # enc.layers.0, enc.layers.1
    troupe-assign gpt2.onnx --dim seq=512 --batch-size 8 --devices devices.json
    troupe-assign model.onnx --group-depth 0                     # one module per operator
  A devices file: [{"name": "cuda:0", "kind": "gpu", "memory_bytes": 16e9}, ...])");
  std::string input_path, format = "text", dot_path, devices = "local";
  troupe::assigner_options overrides;
  troupe::onnx_options onnx;
  int rounds = -1;
  app
    .add_option("model", input_path,
                "an instance JSON file (see data/assigner/README.md) or an ONNX model (.onnx)")
    ->required()
    ->check(CLI::ExistingFile);
  app.add_option("--format", format, "output: text or json")
    ->check(CLI::IsMember({"text", "json"}));
  app.add_option("--dot", dot_path, "also write a Graphviz file, modules coloured by device");
  app.add_option("--seed", overrides.seed, "random seed (same seed, same placement)");
  app.add_option("--restarts", overrides.restarts, "gradient runs from random starts");
  app.add_option("--rounds", rounds, "rounds of the discrete search (default: by size)");
  int group_depth = -1;
  app
    .add_option("--group-depth", group_depth,
                "ONNX: name components that make a module (0: one per operator; default: the "
                "depth of the model's repeated blocks, said on stderr)")
    ->check(CLI::NonNegativeNumber);
  app
    .add_option("--batch-size", onnx.batch_size,
                "ONNX: the size of a symbolic first axis (the batch) not given by --dim")
    ->check(CLI::PositiveNumber);
  std::vector<std::string> dims;
  app.add_option("--dim", dims, "ONNX: NAME=SIZE, the size of a symbolic dim (repeatable)")
    ->each([&](const std::string& d) {
      const auto at = d.find('=');
      std::size_t used = 0;
      long long size = 0;
      try {
        size = at == std::string::npos ? 0 : std::stoll(d.substr(at + 1), &used);
      } catch (const std::exception&) {
      }
      if (at == std::string::npos || at == 0 || used != d.size() - at - 1 || size <= 0)
        throw CLI::ValidationError("--dim", "'" + d + "' is not NAME=SIZE with a positive SIZE");
      onnx.dims[d.substr(0, at)] = size;
    });
  app.add_option("--devices", devices, "ONNX: 'local' (this machine) or a devices JSON file");
  CLI11_PARSE(app, argc, argv);
  onnx.group_depth =
    group_depth < 0 ? std::nullopt : std::optional{static_cast<std::size_t>(group_depth)};

  try {
    auto instance = is_onnx(input_path) ? onnx_instance(input_path, onnx, devices)
                                        : troupe::load_placement_instance(input_path);
    auto options = instance.options;
    options.seed = overrides.seed;
    options.restarts = overrides.restarts;
    if (rounds >= 0)
      options.search_rounds = rounds;
    const auto start = std::chrono::steady_clock::now();
    const auto a =
      troupe::assign(instance.modules, instance.devices, instance.connections, options);
    const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (format == "json")
      print_json(instance, a, wall_ms);
    else
      print_text(instance, a, wall_ms);
    if (!dot_path.empty())
      write_dot(dot_path, instance, a);
  } catch (const troupe::error& e) {
    std::cerr << "troupe-assign: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
