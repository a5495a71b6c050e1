#include "troupe/assigner/placement_loss.hpp"

#include <xtensor/xmath.hpp>

#include <cmath>
#include <cstddef>
#include <numeric>

namespace troupe {

namespace {

/// x / sum(x), or all zeros when the sum is not positive: machin divides by zero there and the
/// whole loss turns NaN; troupe defines the term as absent instead.
template <class Tensor>
Tensor normalised(const Tensor& x) {
  const double total = xt::sum(x)();
  return total > 0 ? Tensor(x / total) : Tensor(xt::zeros_like(x));
}

xt::xtensor<double, 2> row_softmax(const xt::xtensor<double, 2>& logits) {
  const auto n = logits.shape(0), m = logits.shape(1);
  xt::xtensor<double, 2> p = xt::empty<double>({n, m});
  for (std::size_t i = 0; i < n; ++i) {
    double top = logits(i, 0);
    for (std::size_t j = 1; j < m; ++j)
      top = std::max(top, logits(i, j));
    double sum = 0;
    for (std::size_t j = 0; j < m; ++j)
      sum += p(i, j) = std::exp(logits(i, j) - top);
    for (std::size_t j = 0; j < m; ++j)
      p(i, j) /= sum;
  }
  return p;
}

/// out = a * b for row-major n x k and k x m matrices.
xt::xtensor<double, 2> matmul(const xt::xtensor<double, 2>& a, const xt::xtensor<double, 2>& b) {
  const auto n = a.shape(0), k = a.shape(1), m = b.shape(1);
  xt::xtensor<double, 2> out = xt::zeros<double>({n, m});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t l = 0; l < k; ++l) {
      const double x = a(i, l);
      if (x == 0)
        continue;
      for (std::size_t j = 0; j < m; ++j)
        out(i, j) += x * b(l, j);
    }
  return out;
}

} // namespace

placement_loss evaluate_placement(const xt::xtensor<double, 2>& logits, const placement_tensors& t,
                                  const loss_weights& w) {
  const auto n = logits.shape(0), m = logits.shape(1);
  const auto nn = static_cast<double>(n * n), md = static_cast<double>(m);
  const auto p = row_softmax(logits);
  placement_loss out;
  xt::xtensor<double, 2> g = xt::zeros<double>({n, m}); // d loss / d P

  // Connection: mean over i, k of Chat_ik * (P Dhat P^T)_ik, with the i == k terms removed.
  // The zero diagonal goes into A = Chat, which gives the same value and gradient.
  auto a = normalised(t.model_connection);
  for (std::size_t i = 0; i < n; ++i)
    a(i, i) = 0;
  const auto d = normalised(t.device_distance);
  const auto pd = matmul(p, d);                               // P Dhat
  const auto pdt = matmul(p, xt::xtensor<double, 2>(xt::transpose(d))); // P Dhat^T
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < n; ++k)
      if (a(i, k) != 0)
        for (std::size_t j = 0; j < m; ++j)
          out.connection += a(i, k) * pd(i, j) * p(k, j);
  out.connection /= nn;
  // dL/dP = (A P Dhat^T + A^T P Dhat) / n^2
  const auto a_pdt = matmul(a, pdt);
  const auto at_pd = matmul(xt::xtensor<double, 2>(xt::transpose(a)), pd);
  g += w.connection / nn * (a_pdt + at_pd);

  // Size: mean over devices of relu(load - capacity).
  for (std::size_t j = 0; j < m; ++j) {
    double load = 0;
    for (std::size_t i = 0; i < n; ++i)
      load += t.model_size(i) * p(i, j);
    const double over = load - t.size_capacity(j);
    if (over > 0) { // relu'(0) = 0, as torch
      out.size_match += over;
      for (std::size_t i = 0; i < n; ++i)
        g(i, j) += w.size_match / md * t.model_size(i);
    }
  }
  out.size_match /= md;

  // Complexity: mean over devices of (share of complexity - share of compute)^2.
  const auto q = normalised(t.model_complexity);
  const auto k = normalised(t.complexity_capacity);
  if (xt::sum(q)() > 0 && xt::sum(k)() > 0) {
    for (std::size_t j = 0; j < m; ++j) {
      double share = 0;
      for (std::size_t i = 0; i < n; ++i)
        share += q(i) * p(i, j);
      const double diff = share - k(j);
      out.complexity_match += diff * diff;
      for (std::size_t i = 0; i < n; ++i)
        g(i, j) += w.complexity_match / md * 2 * q(i) * diff;
    }
    out.complexity_match /= md;
  }

  // Entropy: mean over modules of -sum_j P log P (terms with P == 0 count 0, as machin).
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j)
      if (p(i, j) > 0) {
        const double log_p = std::log(p(i, j));
        out.entropy -= p(i, j) * log_p;
        g(i, j) -= w.entropy / static_cast<double>(n) * (1 + log_p);
      }
  out.entropy /= static_cast<double>(n);

  out.total = w.connection * out.connection + w.size_match * out.size_match +
              w.complexity_match * out.complexity_match + w.entropy * out.entropy;

  // Through the row softmax: dL/dZ_ij = P_ij (G_ij - sum_l P_il G_il).
  out.gradient = xt::empty<double>({n, m});
  for (std::size_t i = 0; i < n; ++i) {
    double dot = 0;
    for (std::size_t j = 0; j < m; ++j)
      dot += p(i, j) * g(i, j);
    for (std::size_t j = 0; j < m; ++j)
      out.gradient(i, j) = p(i, j) * (g(i, j) - dot);
  }
  return out;
}

double optimize_placement(adam_state& adam, xt::xtensor<double, 2>& logits,
                          const placement_tensors& t, const loss_weights& w) {
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

} // namespace troupe
