// troupe-assign: place a model's modules onto devices from an instance file, and show where.
//
//   troupe-assign data/assigner/instances/n16_m4_tight_cpu_s0.json
//   troupe-assign --format json INSTANCE.json          # {"assignment": [...], "cost": ..., ...}
//   troupe-assign --dot placement.dot INSTANCE.json    # then: dot -Tpng placement.dot > p.png
#include <troupe/actors/error.hpp>
#include <troupe/assigner/assigner.hpp>
#include <troupe/assigner/instance_file.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

namespace {

void print_text(const troupe::placement_instance& instance, const troupe::assignment& a,
                double wall_ms) {
  std::printf("%s: %zu modules on %zu devices\n", instance.name.c_str(), instance.modules.size(),
              instance.devices.size());
  std::printf("%-10s %-10s %14s\n", "module", "device", "size (MiB)");
  for (std::size_t i = 0; i < a.device.size(); ++i)
    std::printf("%-10s %-10s %14.1f\n", instance.modules[i].name.c_str(), a.device_name[i].c_str(),
                instance.modules[i].size_bytes * instance.options.size_multiplier / (1 << 20));
  std::printf("\n%-10s %14s %14s %8s\n", "device", "load (MiB)", "usable (MiB)", "used");
  for (std::size_t j = 0; j < instance.devices.size(); ++j)
    std::printf("%-10s %14.1f %14.1f %7.1f%%\n", instance.devices[j].name.c_str(),
                a.device_load_bytes[j] / (1 << 20), a.device_capacity_bytes[j] / (1 << 20),
                a.device_capacity_bytes[j] > 0
                  ? 100 * a.device_load_bytes[j] / a.device_capacity_bytes[j]
                  : 0.0);
  std::printf("\ncost %.9g  (%s)  in %.1f ms\n", a.cost,
              a.feasible ? "fits every device" : "DOES NOT FIT", wall_ms);
}

void print_json(const troupe::assignment& a, double wall_ms) {
  nlohmann::json out;
  out["assignment"] = a.device;
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

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"Place a model's modules onto devices (troupe's assigner)."};
  std::string instance_path, format = "text", dot_path;
  troupe::assigner_options overrides;
  int rounds = -1;
  app.add_option("instance", instance_path, "instance JSON file (see data/assigner/README.md)")
    ->required()
    ->check(CLI::ExistingFile);
  app.add_option("--format", format, "output: text or json")
    ->check(CLI::IsMember({"text", "json"}));
  app.add_option("--dot", dot_path, "also write a Graphviz file, modules coloured by device");
  app.add_option("--seed", overrides.seed, "random seed (same seed, same placement)");
  app.add_option("--restarts", overrides.restarts, "gradient runs from random starts");
  app.add_option("--rounds", rounds, "rounds of the discrete search (default: by size)");
  CLI11_PARSE(app, argc, argv);

  try {
    auto instance = troupe::load_placement_instance(instance_path);
    auto options = instance.options;
    options.seed = overrides.seed;
    options.restarts = overrides.restarts;
    if (rounds >= 0)
      options.search_rounds = rounds;
    const auto start = std::chrono::steady_clock::now();
    const auto a = troupe::assign(instance.modules, instance.devices, instance.connections, options);
    const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (format == "json")
      print_json(a, wall_ms);
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
