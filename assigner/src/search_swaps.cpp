// The best swap of a descent step: the hot loop of the whole assigner (83 % of its instructions
// at n = 256, m = 16 when every step scanned all n^2 / 2 pairs). Each pair of devices keeps its
// best swap between steps; a move dirties what it changed (see search.hpp) and the next step
// scans only that.
#include "search.hpp"

#include <limits>

namespace troupe::detail {

void placement_search::note_move(std::size_t i, std::size_t from, std::size_t to) {
  device_changed_[from] = device_changed_[to] = 1;
  for (const auto& l : p_.links_of(i))
    if (!module_changed_[l.other]) {
      module_changed_[l.other] = 1;
      changed_modules_.push_back(l.other);
    }
}

void placement_search::forget_swaps() { swaps_known_ = false; }

void placement_search::find_best_swap(candidate& best) {
  gather_by_device();
  pair_best_.resize(m_ * m_);
  for (std::size_t p = 0; p < m_; ++p)
    for (std::size_t q = p + 1; q < m_; ++q) {
      auto& kept = pair_best_[p * m_ + q];
      if (!swaps_known_ || device_changed_[p] || device_changed_[q] ||
          (kept.found && (module_changed_[kept.i] || module_changed_[kept.j]))) {
        kept = scan_block(p, q);
        continue;
      }
      // The kept best's pair is unchanged, so it is still the best of the unchanged pairs.
      work_ += changed_modules_.size();
      for (std::size_t k : changed_modules_)
        if (a_[k] == p)
          scan_row(k, q, kept);
        else if (a_[k] == q)
          scan_row(k, p, kept);
    }
  swaps_known_ = true;
  device_changed_.assign(m_, 0);
  for (std::size_t k : changed_modules_)
    module_changed_[k] = 0;
  changed_modules_.clear();
  for (std::size_t p = 0; p < m_; ++p)
    for (std::size_t q = p + 1; q < m_; ++q)
      if (const auto& kept = pair_best_[p * m_ + q]; kept.found && kept.delta < best.delta)
        best = kept;
}

void placement_search::gather_by_device() {
  work_ += n_;
  device_start_.assign(m_ + 1, 0);
  for (std::size_t i = 0; i < n_; ++i)
    ++device_start_[a_[i] + 1];
  for (std::size_t j = 0; j < m_; ++j)
    device_start_[j + 1] += device_start_[j];
  by_device_.resize(n_);
  auto next = device_start_;
  for (std::size_t i = 0; i < n_; ++i)
    by_device_[next[a_[i]]++] = i;
  gathered_share_.resize(n_);
  gathered_size_.resize(n_);
  for (std::size_t x = 0; x < n_; ++x) {
    gathered_share_[x] = qhat_[by_device_[x]];
    gathered_size_[x] = size_[by_device_[x]];
  }
}

placement_search::candidate placement_search::scan_block(std::size_t p, std::size_t q) {
  candidate best{0, 0, 0, true, false};
  for (std::size_t y = device_start_[p]; y < device_start_[p + 1]; ++y)
    scan_row(by_device_[y], q, best);
  return best;
}

// Module i against every module of device q: with p = a_i, the swap of i and k is
//   u(i, q) - u(i, p) + u(k, p) - u(k, q) + 2 w_b (s_i - s_k)^2 + w_c pair(i, k) exchange(p, q)
// (see move_delta), and fits iff size_i - size_k fits both devices' rooms.
void placement_search::scan_row(std::size_t i, std::size_t q, candidate& best) {
  const auto p = a_[i];
  work_ += device_start_[q + 1] - device_start_[q] + 2 * p_.links_of(i).size() + 8;
  const double room_q = limit_[q] - load_[q], room_p = limit_[p] - load_[p];
  const double pair = conn_scale_ * exchange(p, q);
  const double gain_i = u(i, q) - u(i, p), share_i = qhat_[i], size_i = size_[i];
  for (const auto& l : p_.links_of(i))
    pair_row_[l.other] = l.out + l.in;
  // Locals, not best's fields: the compiler cannot tell those from the arrays read here.
  double best_delta = best.found ? best.delta : std::numeric_limits<double>::infinity();
  std::size_t best_x = n_;
  for (std::size_t x = device_start_[q]; x < device_start_[q + 1]; ++x) {
    const double grow = size_i - gathered_size_[x];
    if (grow > room_q || -grow > room_p)
      continue;
    const auto k = by_device_[x];
    const double ds = share_i - gathered_share_[x];
    const double d = gain_i + u(k, p) - u(k, q) + 2 * bal_scale_ * ds * ds + pair * pair_row_[k];
    if (d < best_delta) {
      best_delta = d;
      best_x = x;
    }
  }
  for (const auto& l : p_.links_of(i))
    pair_row_[l.other] = 0;
  if (best_x != n_)
    best = {best_delta, i, by_device_[best_x], true, true};
}

} // namespace troupe::detail
