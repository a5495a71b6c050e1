#include "troupe/assigner/instance_file.hpp"

#include "troupe/actors/error.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

namespace troupe {

namespace {

using json = nlohmann::json;

const json& field(const json& doc, const char* key, const std::string& path) {
  if (!doc.contains(key))
    throw invalid_argument(path + ": missing field \"" + key + "\"");
  return doc.at(key);
}

std::vector<double> numbers(const json& doc, const char* key, std::size_t count,
                            const std::string& path) {
  const auto& v = field(doc, key, path);
  if (!v.is_array() || v.size() != count)
    throw invalid_argument(path + ": \"" + key + "\" must be a list of " + std::to_string(count) +
                           " numbers");
  return v.get<std::vector<double>>();
}

xt::xtensor<double, 2> matrix(const json& doc, const char* key, std::size_t rows,
                              const std::string& path) {
  const auto& v = field(doc, key, path);
  xt::xtensor<double, 2> out = xt::zeros<double>({rows, rows});
  if (!v.is_array() || v.size() != rows)
    throw invalid_argument(path + ": \"" + key + "\" must be " + std::to_string(rows) + "x" +
                           std::to_string(rows));
  for (std::size_t r = 0; r < rows; ++r) {
    if (!v[r].is_array() || v[r].size() != rows)
      throw invalid_argument(path + ": row " + std::to_string(r) + " of \"" + key +
                             "\" must have " + std::to_string(rows) + " numbers");
    for (std::size_t c = 0; c < rows; ++c)
      out(r, c) = v[r][c].get<double>();
  }
  return out;
}

} // namespace

placement_instance load_placement_instance(const std::string& path) {
  std::ifstream in{path};
  if (!in)
    throw invalid_argument("cannot open placement instance " + path);
  json doc;
  try {
    doc = json::parse(in);
    placement_instance out;
    out.name = doc.value("name", path);
    const auto n = field(doc, "n", path).get<std::size_t>();
    const auto m = field(doc, "m", path).get<std::size_t>();
    const auto sizes = numbers(doc, "sizes", n, path);
    const auto complexities = numbers(doc, "complexities", n, path);
    for (std::size_t i = 0; i < n; ++i)
      out.modules.push_back({"m" + std::to_string(i), sizes[i], complexities[i]});
    const auto connection = matrix(doc, "connection", n, path);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < n; ++k)
        if (connection(i, k) != 0)
          out.connections.push_back({i, k, connection(i, k)});

    const auto capacities = numbers(doc, "capacities", m, path);
    const auto powers = numbers(doc, "compute_powers", m, path);
    const auto names = doc.value("device_names", std::vector<std::string>{});
    const auto types = doc.value("device_types", std::vector<std::string>{});
    for (std::size_t j = 0; j < m; ++j) {
      device_spec d;
      d.name = j < names.size() ? names[j] : "device" + std::to_string(j);
      d.kind = j < types.size() && types[j] == "cpu" ? device_kind::cpu : device_kind::gpu;
      d.memory_capacity_bytes = capacities[j];
      d.compute_power = powers[j];
      out.devices.push_back(d);
    }
    out.options.distance = matrix(doc, "distance", m, path);
    out.options.size_multiplier = 1;
    out.options.max_mem_ratio = 1;
    out.options.size_unit_bytes = doc.value("size_unit_bytes", double(1 << 20));
    if (doc.contains("weights")) {
      const auto& w = doc.at("weights");
      out.options.connection_weight = w.value("connection", out.options.connection_weight);
      out.options.size_match_weight = w.value("size_match", out.options.size_match_weight);
      out.options.complexity_match_weight =
        w.value("complexity_match", out.options.complexity_match_weight);
      out.options.entropy_weight = w.value("entropy", out.options.entropy_weight);
    }
    return out;
  } catch (const json::exception& e) {
    throw invalid_argument(path + ": not a placement instance: " + e.what());
  }
}

std::vector<device_spec> load_devices(const std::string& path) {
  std::ifstream in{path};
  if (!in)
    throw invalid_argument("cannot open devices file " + path);
  try {
    const auto doc = json::parse(in);
    if (!doc.is_array() || doc.empty())
      throw invalid_argument(path + ": a devices file is a non-empty list of devices");
    std::vector<device_spec> devices;
    for (const auto& each : doc) {
      device_spec d;
      d.name = field(each, "name", path).get<std::string>();
      const auto kind = field(each, "kind", path).get<std::string>();
      if (kind != "gpu" && kind != "cpu")
        throw invalid_argument(path + ": device \"" + d.name + "\": kind is \"gpu\" or \"cpu\"");
      d.kind = kind == "cpu" ? device_kind::cpu : device_kind::gpu;
      d.memory_capacity_bytes = field(each, "memory_bytes", path).get<double>();
      if (each.contains("compute_power"))
        d.compute_power = each.at("compute_power").get<double>();
      devices.push_back(std::move(d));
    }
    return devices;
  } catch (const json::exception& e) {
    throw invalid_argument(path + ": not a devices file: " + e.what());
  }
}

} // namespace troupe
