// Reads the recordings of machin's ModelAssigner (data/assigner/machin_instances/*.json).
#pragma once

#include "troupe/assigner/placement_loss.hpp"
#include "troupe/assigner/specs.hpp"

#include <nlohmann/json.hpp>
#include <xtensor/xadapt.hpp>
#include <xtensor/xtensor.hpp>

#include <fstream>
#include <string>
#include <vector>

namespace troupe::testing {

inline std::string assigner_data(const std::string& relative) {
  return std::string{TROUPE_ASSIGNER_DATA} + "/" + relative;
}

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in{path};
  return nlohmann::json::parse(in);
}

inline xt::xtensor<double, 2> matrix_of(const nlohmann::json& rows) {
  const auto n = rows.size(), m = rows[0].size();
  xt::xtensor<double, 2> out = xt::zeros<double>({n, m});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j)
      out(i, j) = rows[i][j].get<double>();
  return out;
}

/// One of machin's recorded runs.
struct machin_run {
  std::string name;
  nlohmann::json doc;

  std::size_t n() const { return doc["n_models"]; }
  std::size_t m() const { return doc["n_devices"]; }

  /// The tensors machin's optimize_placement received (sizes in MB, complexity = size).
  placement_tensors tensors() const {
    placement_tensors t;
    const auto sizes = doc["model_sizes_mb"].get<std::vector<double>>();
    const auto caps = doc["derived"]["device_size_capacity"].get<std::vector<double>>();
    const auto powers = doc["derived"]["device_complexity_capacity"].get<std::vector<double>>();
    t.model_size = xt::adapt(sizes, {sizes.size()});
    t.model_complexity = t.model_size;
    t.size_capacity = xt::adapt(caps, {caps.size()});
    t.complexity_capacity = xt::adapt(powers, {powers.size()});
    t.model_connection = xt::zeros<double>({n(), n()});
    for (const auto& c : doc["model_connection"])
      t.model_connection(c[0].get<std::size_t>(), c[1].get<std::size_t>()) = c[2].get<double>();
    t.device_distance = matrix_of(doc["derived"]["device_distance"]);
    return t;
  }

  loss_weights weights() const {
    const auto& h = doc["hyper"];
    return {h["connection_weight"], h["size_match_weight"], h["complexity_match_weight"],
            h["entropy_weight"]};
  }

  /// The same problem described the way a user would: bytes, devices, connections.
  void as_specs(std::vector<module_spec>& modules, std::vector<device_spec>& devices,
                std::vector<connection>& connections, assigner_options& options) const {
    const double mb = 1 << 20;
    const auto& h = doc["hyper"];
    for (double s : doc["model_sizes_mb"].get<std::vector<double>>())
      modules.push_back({"model" + std::to_string(modules.size()), s * mb, std::nullopt});
    const auto powers = doc["derived"]["device_complexity_capacity"].get<std::vector<double>>();
    const auto& gpus = doc["gpus"];
    for (std::size_t j = 0; j < gpus.size(); ++j)
      devices.push_back({"cuda:" + std::to_string(gpus[j]["index"].get<int>()), device_kind::gpu,
                         gpus[j]["memoryFree"].get<double>() * mb, powers[j]});
    devices.push_back(
      {"cpu", device_kind::cpu, doc["cpu_available_mb"].get<double>() * mb, std::nullopt});
    for (const auto& c : doc["model_connection"])
      connections.push_back({c[0].get<std::size_t>(), c[1].get<std::size_t>(), c[2].get<double>()});
    options.size_multiplier = h["model_size_multiplier"];
    options.max_mem_ratio = h["max_mem_ratio"];
    options.cpu_weight = powers.back(); // machin's cpu_weight, as float32 rounded it
    options.connection_weight = h["connection_weight"];
    options.size_match_weight = h["size_match_weight"];
    options.complexity_match_weight = h["complexity_match_weight"];
    options.entropy_weight = h["entropy_weight"];
    options.update_rate = h["update_rate"];
    options.gpu_gpu_distance = h["gpu_gpu_distance"];
    options.cpu_gpu_distance = h["cpu_gpu_distance"];
    options.iterations = doc["iterations"];
    options.initial_logits = matrix_of(doc["initial_placement_logits"]);
  }
};

inline std::vector<machin_run> machin_runs() {
  std::vector<machin_run> out;
  for (const char* name :
       {"assign_n4_m2", "assign_n4_m4", "assign_n4_m8", "assign_n16_m2", "assign_n16_m4",
        "assign_n16_m8", "assign_n64_m2", "assign_n64_m4", "assign_n64_m8"})
    out.push_back(
      {name, read_json(assigner_data(std::string{"machin_instances/"} + name + ".json"))});
  return out;
}

} // namespace troupe::testing
