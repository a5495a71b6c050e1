#include "troupe/assigner/placement_loss.hpp"

#include "troupe/actors/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <string>
#include <vector>

namespace troupe {

namespace {

double sum_of(const double* x, std::size_t count) { return std::accumulate(x, x + count, 0.0); }

/// x / sum(x); empty when the sum is not positive. machin divides by zero there and the whole
/// loss turns NaN; troupe defines the term as absent instead.
std::vector<double> shares(const double* x, std::size_t count) {
  const double total = sum_of(x, count);
  std::vector<double> out;
  if (total > 0)
    for (std::size_t i = 0; i < count; ++i)
      out.push_back(x[i] / total);
  return out;
}

/// The nonzero entries of a dense connection matrix, row by row.
std::vector<connection> connection_list(const xt::xtensor<double, 2>& c) {
  std::vector<connection> out;
  for (std::size_t i = 0; i < c.shape(0); ++i)
    for (std::size_t k = 0; k < c.shape(1); ++k)
      if (c(i, k) != 0)
        out.push_back({i, k, c(i, k)});
  return out;
}

const std::vector<connection>& only_list(const placement_tensors& t,
                                         const std::vector<connection>& connections) {
  if (t.model_connection.size() != 0)
    throw invalid_argument("prepared_placement: placement_tensors::model_connection must be "
                           "empty when the connections come as a list");
  return connections;
}

} // namespace

prepared_placement::prepared_placement(const placement_tensors& t)
  : prepared_placement(from_list{}, t, connection_list(t.model_connection)) {}

prepared_placement::prepared_placement(const placement_tensors& t,
                                       const std::vector<connection>& connections)
  : prepared_placement(from_list{}, t, only_list(t, connections)) {}

prepared_placement::prepared_placement(from_list, const placement_tensors& t,
                                       const std::vector<connection>& connections)
  : n_(t.model_size.size()), m_(t.size_capacity.size()),
    size_(t.model_size.begin(), t.model_size.end()),
    capacity_(t.size_capacity.begin(), t.size_capacity.end()) {
  dhat_ = shares(t.device_distance.data(), m_ * m_);
  double c_total = 0;
  for (std::size_t e = 0; e < connections.size(); ++e) {
    const auto& c = connections[e];
    if (c.from >= n_ || c.to >= n_)
      throw invalid_argument("connections[" + std::to_string(e) + "] joins module " +
                             std::to_string(c.from) + " to module " + std::to_string(c.to) +
                             ", but there are " + std::to_string(n_) + " modules");
    c_total += c.weight;
  }
  if (c_total > 0 && !dhat_.empty())
    for (const auto& c : connections)
      if (c.from != c.to && c.weight != 0) // machin zeroes the diagonal of P D P^T
        edges_.push_back({c.from, c.to, c.weight / c_total});
  qhat_ = shares(t.model_complexity.data(), n_);
  khat_ = shares(t.complexity_capacity.data(), m_);
  if (qhat_.empty() || khat_.empty()) {
    qhat_.clear();
    khat_.clear();
  }
}

placement_loss evaluate_placement(const xt::xtensor<double, 2>& logits, const placement_tensors& t,
                                  const loss_weights& w) {
  return evaluate_placement(logits, prepared_placement{t}, w);
}

placement_loss evaluate_placement(const xt::xtensor<double, 2>& logits, const prepared_placement& t,
                                  const loss_weights& w) {
  const auto n = logits.shape(0), m = logits.shape(1);
  const double nn = static_cast<double>(n * n), md = static_cast<double>(m);
  placement_loss out;
  out.gradient = xt::zeros<double>({n, m});
  double* g = out.gradient.data(); // first d loss / d P, then d loss / d logits

  // P = row softmax of the logits; log P comes with it, without a log per entry.
  std::vector<double> p(n * m), log_p(n * m);
  for (std::size_t i = 0; i < n; ++i) {
    const double* z = &logits(i, 0);
    const double top = *std::max_element(z, z + m);
    double sum = 0;
    for (std::size_t j = 0; j < m; ++j)
      sum += p[i * m + j] = std::exp(z[j] - top);
    const double log_sum = std::log(sum);
    for (std::size_t j = 0; j < m; ++j) {
      p[i * m + j] /= sum;
      log_p[i * m + j] = z[j] - top - log_sum;
    }
  }

  // Connection: mean over i != k of Chat_ik (P Dhat P^T)_ik; the gradient is
  // (A P Dhat^T + A^T P Dhat) / n^2 with A = Chat without its diagonal.
  if (!t.edges_.empty()) {
    std::vector<double> pd(n * m, 0.0), pdt(n * m, 0.0); // P Dhat, P Dhat^T
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t l = 0; l < m; ++l) {
        const double x = p[i * m + l];
        for (std::size_t j = 0; j < m; ++j) {
          pd[i * m + j] += x * t.dhat_[l * m + j];
          pdt[i * m + j] += x * t.dhat_[j * m + l];
        }
      }
    const double scale = w.connection / nn;
    for (const auto& e : t.edges_)
      for (std::size_t j = 0; j < m; ++j) {
        out.connection += e.weight * pd[e.from * m + j] * p[e.to * m + j];
        g[e.from * m + j] += scale * e.weight * pdt[e.to * m + j];
        g[e.to * m + j] += scale * e.weight * pd[e.from * m + j];
      }
    out.connection /= nn;
  }

  // Size: mean over devices of relu(load - capacity); relu'(0) = 0, as torch.
  for (std::size_t j = 0; j < m; ++j) {
    double load = 0;
    for (std::size_t i = 0; i < n; ++i)
      load += t.size_[i] * p[i * m + j];
    const double over = load - t.capacity_[j];
    if (over > 0) {
      out.size_match += over;
      for (std::size_t i = 0; i < n; ++i)
        g[i * m + j] += w.size_match / md * t.size_[i];
    }
  }
  out.size_match /= md;

  // Complexity: mean over devices of (share of complexity - share of compute)^2.
  if (!t.qhat_.empty()) {
    for (std::size_t j = 0; j < m; ++j) {
      double share = 0;
      for (std::size_t i = 0; i < n; ++i)
        share += t.qhat_[i] * p[i * m + j];
      const double diff = share - t.khat_[j];
      out.complexity_match += diff * diff;
      for (std::size_t i = 0; i < n; ++i)
        g[i * m + j] += w.complexity_match / md * 2 * t.qhat_[i] * diff;
    }
    out.complexity_match /= md;
  }

  // Entropy: mean over modules of -sum_j P log P (terms with P == 0 count 0, as machin).
  for (std::size_t x = 0; x < n * m; ++x)
    if (p[x] > 0) {
      out.entropy -= p[x] * log_p[x];
      g[x] -= w.entropy / static_cast<double>(n) * (1 + log_p[x]);
    }
  out.entropy /= static_cast<double>(n);

  out.total = w.connection * out.connection + w.size_match * out.size_match +
              w.complexity_match * out.complexity_match + w.entropy * out.entropy;

  // Through the row softmax: dL/dZ_ij = P_ij (G_ij - sum_l P_il G_il).
  for (std::size_t i = 0; i < n; ++i) {
    double dot = 0;
    for (std::size_t j = 0; j < m; ++j)
      dot += p[i * m + j] * g[i * m + j];
    for (std::size_t j = 0; j < m; ++j)
      g[i * m + j] = p[i * m + j] * (g[i * m + j] - dot);
  }
  return out;
}

namespace {

template <class Problem>
double adam_step(adam_state& adam, xt::xtensor<double, 2>& logits, const Problem& t,
                 const loss_weights& w) {
  auto loss = evaluate_placement(logits, t, w);
  if (adam.step == 0) {
    adam.first_moment = xt::zeros_like(logits);
    adam.second_moment = xt::zeros_like(logits);
  }
  ++adam.step;
  const double bias1 = 1 - std::pow(adam.beta1, adam.step);
  const double bias2 = 1 - std::pow(adam.beta2, adam.step);
  const double step_size = adam.learning_rate / bias1;
  const double sqrt_bias2 = std::sqrt(bias2);
  auto* z = logits.data();
  auto* m1 = adam.first_moment.data();
  auto* m2 = adam.second_moment.data();
  const auto* g = loss.gradient.data();
  for (std::size_t i = 0; i < logits.size(); ++i) {
    m1[i] = adam.beta1 * m1[i] + (1 - adam.beta1) * g[i];
    m2[i] = adam.beta2 * m2[i] + (1 - adam.beta2) * g[i] * g[i];
    z[i] -= step_size * m1[i] / (std::sqrt(m2[i]) / sqrt_bias2 + adam.epsilon);
  }
  return loss.total;
}

} // namespace

double optimize_placement(adam_state& adam, xt::xtensor<double, 2>& logits,
                          const placement_tensors& t, const loss_weights& w) {
  return adam_step(adam, logits, t, w);
}

double optimize_placement(adam_state& adam, xt::xtensor<double, 2>& logits,
                          const prepared_placement& t, const loss_weights& w) {
  return adam_step(adam, logits, t, w);
}

} // namespace troupe
