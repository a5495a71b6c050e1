// A placement problem as the assigner's phases see it: validated, in machin's units, with the
// normalisations of the objective computed once.
#pragma once

#include "troupe/assigner/placement_loss.hpp"
#include "troupe/assigner/specs.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace troupe::detail {

/// A module's connection to another, both directions summed over repeats and normalised:
/// `out` = Chat(i, other), `in` = Chat(other, i).
struct link {
  std::size_t other;
  double out, in;
};

struct problem {
  std::size_t n = 0; // modules
  std::size_t m = 0; // devices
  std::vector<std::string> device_names;
  double size_unit = 1;

  // For the gradient phase (machin's tensors, sizes in size units; the connections as a list).
  placement_tensors tensors;
  std::vector<connection> connections;
  loss_weights weights;

  // For the discrete phase: J(a) = w_c CONN(a) + w_x BAL(a), memory a hard limit.
  std::vector<double> size; // per module, size units (multiplier applied)
  std::vector<double> capacity; // per device, size units (max_mem_ratio applied)
  // C / sum(C) without its diagonal, as each module's links (a model has O(n) connections:
  // n x n would be quadratic memory): module i's are links[link_begin[i] .. link_begin[i + 1]).
  std::vector<std::size_t> link_begin;
  std::vector<link> links;
  xt::xtensor<double, 2> dhat; // D / sum(D)
  std::vector<double> qhat; // complexity shares
  std::vector<double> phat; // compute shares
  bool balance = true; // false when either share is undefined (all zero)

  std::span<const link> links_of(std::size_t i) const noexcept {
    return {links.data() + link_begin[i], links.data() + link_begin[i + 1]};
  }
};

/// Validates the inputs (throws troupe::invalid_argument naming the field) and builds the
/// problem.
problem make_problem(const std::vector<module_spec>& modules,
                     const std::vector<device_spec>& devices,
                     const std::vector<connection>& connections, const assigner_options& options);

/// J(a): machin's loss at the one-hot placement `a` (the entropy term is 0 there, the size term
/// is the hard constraint instead).
double placement_cost(const problem& p, const std::vector<std::size_t>& a);

/// Memory placed on each device by `a`, in size units.
std::vector<double> device_loads(const problem& p, const std::vector<std::size_t>& a);

bool fits(const problem& p, const std::vector<double>& loads);

} // namespace troupe::detail
