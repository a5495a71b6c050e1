// troupe-assign: place a model's modules onto devices, from an instance file or an ONNX model,
// and show where.
//
//   troupe-assign data/assigner/instances/n16_m4_tight_cpu_s0.json
//   troupe-assign --format json INSTANCE.json          # {"assignment": [...], "cost": ..., ...}
//   troupe-assign --dot placement.dot INSTANCE.json    # then: dot -Tpng placement.dot > p.png
//   troupe-assign model.onnx --group-depth 2 --batch-size 8 --devices local   # or devices.json
//   troupe-assign gpt2.onnx --group-depth 2 --dim seq=512                    # a symbolic dim
#include <troupe/actors/error.hpp>
#include <troupe/assigner/assigner.hpp>
#include <troupe/assigner/devices.hpp>
#include <troupe/assigner/instance_file.hpp>
#include <troupe/assigner/onnx_model.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>
#include <string>

namespace {

void print_text(const troupe::placement_instance& instance, const troupe::assignment& a,
                double wall_ms) {
  std::printf("%s: %zu modules on %zu devices\n", instance.name.c_str(), instance.modules.size(),
              instance.devices.size());
  std::printf("%-16s %-10s %14s\n", "module", "device", "size (MiB)");
  for (std::size_t i = 0; i < a.device.size(); ++i)
    std::printf("%-16s %-10s %14.1f\n", instance.modules[i].name.c_str(), a.device_name[i].c_str(),
                instance.modules[i].size_bytes * instance.options.size_multiplier / (1 << 20));
  // Each device's share of the compute (complexities; a module's size when it has none).
  std::vector<double> compute(instance.devices.size(), 0.0);
  for (std::size_t i = 0; i < a.device.size(); ++i)
    compute[a.device[i]] += instance.modules[i].complexity.value_or(instance.modules[i].size_bytes);
  const double total = std::accumulate(compute.begin(), compute.end(), 0.0);
  std::printf("\n%-10s %14s %14s %8s %9s\n", "device", "load (MiB)", "usable (MiB)", "used",
              "compute");
  for (std::size_t j = 0; j < instance.devices.size(); ++j)
    std::printf("%-10s %14.1f %14.1f %7.1f%% %8.1f%%\n", instance.devices[j].name.c_str(),
                a.device_load_bytes[j] / (1 << 20), a.device_capacity_bytes[j] / (1 << 20),
                a.device_capacity_bytes[j] > 0
                  ? 100 * a.device_load_bytes[j] / a.device_capacity_bytes[j]
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

/// An ONNX model as an instance: its modules and connections, on `devices` ("local" or a
/// devices file), with the assigner's default options.
troupe::placement_instance onnx_instance(const std::string& path, const troupe::onnx_options& o,
                                         const std::string& devices) {
  auto model = troupe::model_from_onnx(path, o);
  for (const auto& warning : model.warnings)
    std::cerr << "troupe-assign: warning: " << warning << "\n";
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
  app.add_option("--group-depth", onnx.group_depth,
                 "ONNX: name components that make a module (0: one per operator)");
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
