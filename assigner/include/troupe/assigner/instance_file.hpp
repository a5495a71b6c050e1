// Placement problems stored as JSON, in the format of troupe's assigner fixtures
// (data/assigner/instances/*.json):
//
//   {"name": "...", "n": 4, "m": 2,
//    "sizes": [bytes per module], "complexities": [per module],
//    "connection": [[n x n: data from row module to column module]],
//    "device_names": ["cuda:0", "cpu"], "device_types": ["gpu", "cpu"],
//    "capacities": [usable bytes per device], "compute_powers": [per device],
//    "distance": [[m x m]],
//    "weights": {"connection": 2, "size_match": 0.01, "complexity_match": 1, "entropy": 1},
//    "size_unit_bytes": 1048576}
//
// Capacities are taken as usable memory and sizes as final, so the options it returns set
// size_multiplier and max_mem_ratio to 1.
#pragma once

#include "troupe/assigner/specs.hpp"

#include <string>
#include <vector>

namespace troupe {

/// A placement problem as an instance file stores it (data/assigner/instances): modules, devices,
/// connections and the assigner's options.
struct placement_instance {
  /// The instance's name.
  std::string name;
  /// The modules to place.
  std::vector<module_spec> modules;
  /// The devices to place them on.
  std::vector<device_spec> devices;
  /// The data flowing between modules.
  std::vector<connection> connections;
  /// The assigner's options for it.
  assigner_options options;
};

/// Reads an instance file; throws troupe::invalid_argument naming what is missing or malformed.
placement_instance load_placement_instance(const std::string& path);

/// Reads a devices file:
///
///   [{"name": "cuda:0", "kind": "gpu", "memory_bytes": 16e9, "compute_power": 1},
///    {"name": "cpu", "kind": "cpu", "memory_bytes": 64e9}]
///
/// ("compute_power" optional); throws troupe::invalid_argument naming what is wrong.
std::vector<device_spec> load_devices(const std::string& path);

} // namespace troupe
