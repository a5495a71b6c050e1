// Places the modules of a model onto devices, as machin's ModelAssigner does, then better.
//
//   std::vector<troupe::module_spec> modules{{"embed", 2e9}, {"encoder", 6e9}, {"head", 1e9}};
//   std::vector<troupe::device_spec> devices{{"cuda:0", troupe::device_kind::gpu, 16e9},
//                                            {"cuda:1", troupe::device_kind::gpu, 16e9},
//                                            {"cpu", troupe::device_kind::cpu, 64e9}};
//   std::vector<troupe::connection> flows{{0, 1, 4e6}, {1, 2, 1e6}};
//   troupe::assignment a = troupe::assign(modules, devices, flows);
//   // a.device_name[i]: where module i goes; a.cost; a.device_load_bytes
//
// Phase 1 is machin's: a softmax placement matrix optimised by Adam on machin's loss
// (connection cost, memory overflow, compute balance, entropy), from `restarts` random starts.
// Phase 2 is troupe's: machin's argmax read-out can overflow a device, so its answer is
// repaired to fit memory and improved by local search (module moves and swaps) on J, machin's
// loss at a one-hot placement with memory as a hard limit. Results depend only on the inputs
// and `options.seed`.
//
// Throws troupe::invalid_argument for malformed input (naming the field) and
// troupe::capacity_error when the modules cannot fit the devices' usable memory.
#pragma once

#include "troupe/assigner/specs.hpp"

#include <vector>

namespace troupe {

assignment assign(const std::vector<module_spec>& modules, const std::vector<device_spec>& devices,
                  const std::vector<connection>& connections, const assigner_options& options = {});

/// The same, holding its inputs: describe the model once, assign under several option sets.
class model_assigner {
public:
  /// Holds the model: its modules, the devices, and the connections between modules.
  model_assigner(std::vector<module_spec> modules, std::vector<device_spec> devices,
                 std::vector<connection> connections = {});

  /// Places the modules it holds with `options`.
  assignment assign(const assigner_options& options = {}) const;

  /// J of a given placement (device index per module), for comparing placements.
  double cost(const std::vector<std::size_t>& placement,
              const assigner_options& options = {}) const;

private:
  std::vector<module_spec> modules_;
  std::vector<device_spec> devices_;
  std::vector<connection> connections_;
};

} // namespace troupe
