// machin's placement loss, its gradient, and one optimisation step, on plain tensors, exactly as
// `machin.parallel.assigner.ModelAssigner.optimize_placement` computes them (but in double, with
// hand-derived gradients, and with degenerate normalisations defined as 0 instead of NaN).
//
//   troupe::placement_tensors t{...};
//   troupe::adam_state adam{.learning_rate = 0.01};
//   xt::xtensor<double, 2> logits = ...;           // n x m
//   for (int i = 0; i < 500; ++i)
//     troupe::optimize_placement(adam, logits, t, troupe::loss_weights{});
#pragma once

#include "troupe/assigner/specs.hpp"

#include <xtensor/xtensor.hpp>

#include <cstddef>
#include <vector>

namespace troupe {

/// machin's inputs, unnormalised: sizes and capacities in one unit (machin: MB), complexities and
/// compute powers in any unit each, connection n x n, distance m x m.
struct placement_tensors {
  /// Each module's size (n).
  xt::xtensor<double, 1> model_size;
  /// Each device's memory capacity (m).
  xt::xtensor<double, 1> size_capacity;
  /// Each module's complexity (n).
  xt::xtensor<double, 1> model_complexity;
  /// Each device's compute power (m).
  xt::xtensor<double, 1> complexity_capacity;
  /// Data flowing from module i to module j (n x n).
  xt::xtensor<double, 2> model_connection;
  /// The cost of moving data between devices i and j (m x m).
  xt::xtensor<double, 2> device_distance;
};

/// machin's weights of the loss's terms.
struct loss_weights {
  /// The connection cost's weight.
  double connection = 2;
  /// The size-match term's weight.
  double size_match = 0.01;
  /// The complexity-match term's weight.
  double complexity_match = 1;
  /// The entropy term's weight.
  double entropy = 1;
};

/// machin's loss at a placement, its terms, and its gradient.
struct placement_loss {
  /// The weighted sum of the terms.
  double total = 0;
  double connection = 0; ///< unweighted terms
  /// Memory against capacity, unweighted.
  double size_match = 0;
  /// Compute against compute power, unweighted.
  double complexity_match = 0;
  /// The softmax rows' entropy, unweighted.
  double entropy = 0;
  xt::xtensor<double, 2> gradient; ///< d total / d logits, n x m
};

/// The loss at `logits` (n x m, softmax over each row) and its gradient.
placement_loss evaluate_placement(const xt::xtensor<double, 2>& logits, const placement_tensors& t,
                                  const loss_weights& w);

/// placement_tensors with their normalisations done once, for many evaluations on the same
/// problem (the connection matrix is kept as its list of edges: models are sparse graphs).
class prepared_placement {
public:
  /// The inputs `t`, normalised once.
  explicit prepared_placement(const placement_tensors& t);
  /// The same with the connections as a list (repeated pairs add up, self-connections count in
  /// the normalisation as machin's diagonal does) instead of `t.model_connection`, which must be
  /// empty: memory linear in the modules and the connections, for models of thousands of
  /// modules. Throws troupe::invalid_argument for a connection naming a module out of range.
  prepared_placement(const placement_tensors& t, const std::vector<connection>& connections);

  /// The number of modules (n).
  std::size_t modules() const noexcept { return n_; }
  /// The number of devices (m).
  std::size_t devices() const noexcept { return m_; }

private:
  friend placement_loss evaluate_placement(const xt::xtensor<double, 2>&, const prepared_placement&,
                                           const loss_weights&);
  struct from_list {};
  prepared_placement(from_list, const placement_tensors& t,
                     const std::vector<connection>& connections);
  struct edge {
    std::size_t from, to;
    double weight; // Chat_from,to
  };
  std::size_t n_, m_;
  std::vector<edge> edges_;
  std::vector<double> dhat_; // m x m, empty when all distances are 0
  std::vector<double> size_, capacity_;
  std::vector<double> qhat_, khat_; // empty when either share is undefined
};

placement_loss evaluate_placement(const xt::xtensor<double, 2>& logits, const prepared_placement& t,
                                  const loss_weights& w);

/// torch.optim.Adam's update (single-tensor, no weight decay, no amsgrad).
struct adam_state {
  /// Adam's step size.
  double learning_rate = 0.01;
  /// The first moment's decay.
  double beta1 = 0.9;
  /// The second moment's decay.
  double beta2 = 0.999;
  /// Added to the denominator, against division by zero.
  double epsilon = 1e-8;
  xt::xtensor<double, 2> first_moment; ///< sized on the first step
  /// The running mean of squared gradients (sized on the first step).
  xt::xtensor<double, 2> second_moment;
  /// Steps taken.
  int step = 0;
};

/// One loss-and-gradient evaluation and one Adam step on `logits`; returns the loss before the
/// step (machin's optimize_placement).
double optimize_placement(adam_state& adam, xt::xtensor<double, 2>& logits,
                          const placement_tensors& t, const loss_weights& w);
double optimize_placement(adam_state& adam, xt::xtensor<double, 2>& logits,
                          const prepared_placement& t, const loss_weights& w);

} // namespace troupe
