// What the assigner places (modules), where (devices), and how it is tuned.
#pragma once

#include <xtensor/xtensor.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace troupe {

/// A part of a model. `complexity` (compute it needs, any unit) defaults to its size, as in
/// machin.
struct module_spec {
  /// What errors and placements call it.
  std::string name;
  /// The memory its parameters take (the assigner multiplies it by size_multiplier).
  double size_bytes = 0;
  /// The compute it needs, in any unit; unset: its size.
  std::optional<double> complexity;
};

enum class device_kind { cpu, gpu };

/// A device modules may go to: its memory and its share of the compute.
struct device_spec {
  /// Its name, as placements give it ("cuda:0", "cpu", "cuda:1@rank-2").
  std::string name;
  /// A GPU or a CPU.
  device_kind kind = device_kind::gpu;
  /// Its memory (max_mem_ratio of it is usable).
  double memory_capacity_bytes = 0;
  /// Share of compute this device offers (machin: 1 - load for a GPU). Unset: 1 for a GPU,
  /// assigner_options::cpu_weight for a CPU.
  std::optional<double> compute_power;
};

/// `weight` units of data flow from module `from` to module `to` (directed, >= 0).
struct connection {
  /// The module the data leaves.
  std::size_t from = 0;
  /// The module it reaches.
  std::size_t to = 0;
  /// How much flows (bytes a step, or any unit).
  double weight = 1;
};

/// The assigner's knobs: machin's, with machin's defaults, and troupe's additions.
struct assigner_options {
  // machin's knobs, with machin's defaults.
  double size_multiplier = 2; ///< module memory = size_bytes * size_multiplier
  double max_mem_ratio = 0.5; ///< usable memory = memory_capacity_bytes * max_mem_ratio
  double cpu_weight = 0; ///< compute power of a CPU whose compute_power is unset
  /// machin's weight of the connection cost in the loss.
  double connection_weight = 2;
  /// machin's weight of the size-match term (memory against capacity).
  double size_match_weight = 0.01;
  /// machin's weight of the complexity-match term (compute against compute power).
  double complexity_match_weight = 1;
  /// machin's weight of the entropy term (which pushes the softmax toward one device).
  double entropy_weight = 1;
  int iterations = 500; ///< Adam steps of the gradient phase
  double update_rate = 0.01; ///< Adam learning rate
  double gpu_gpu_distance = 1; ///< default distance between two GPUs
  double cpu_gpu_distance = 10; ///< default distance between a CPU and a GPU
  /// Sizes enter the loss in this unit (machin: MB = 2^20 bytes).
  double size_unit_bytes = 1 << 20;

  // troupe's additions.
  std::uint64_t seed = 0; ///< same seed, same result
  int restarts = 1; ///< gradient runs from independent random starts
  /// Start of the (first) gradient run instead of random normal logits, n x m.
  std::optional<xt::xtensor<double, 2>> initial_logits;
  /// Device distances, m x m, instead of the gpu/cpu defaults.
  std::optional<xt::xtensor<double, 2>> distance;
  /// Perturbation rounds of the discrete search after the gradient phase; unset: a budget of
  /// work scaled to the problem (about 0.6 s up to 64 modules, a second from about 100 on, the
  /// same search for the same seed whatever the machine's load).
  std::optional<int> search_rounds;
};

/// Where each module goes, and what that costs.
struct assignment {
  std::vector<std::size_t> device; ///< device index per module
  std::vector<std::string> device_name; ///< device name per module
  /// machin's objective at this (one-hot) placement: connection + compute-balance terms.
  double cost = 0;
  bool feasible = true; ///< every device within its usable memory
  std::vector<double> device_load_bytes; ///< memory placed on each device
  std::vector<double> device_capacity_bytes; ///< usable memory of each device
  /// The gradient phase that seeded the result: softmax of its final logits, its loss before
  /// each Adam step and after the last, and its argmax (machin's own answer, which may not fit).
  xt::xtensor<double, 2> probabilities;
  /// The gradient phase's loss before each Adam step and after the last.
  std::vector<double> loss_trace;
  /// machin's own answer: the argmax of the final logits (it may not fit).
  std::vector<std::size_t> gradient_argmax;
};

} // namespace troupe
