#include "search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>

namespace troupe::detail {

namespace {

constexpr double relative_tolerance = 1e-12; // an improvement smaller than this is rounding
constexpr std::size_t stall_rounds = 300; // iterate(): rounds without a new best before a jump

} // namespace

placement_search::placement_search(const problem& p)
  : p_(p), n_(p.n), m_(p.m), dhat_(p.dhat.begin(), p.dhat.end()),
    conn_scale_(p.weights.connection / static_cast<double>(p.n * p.n)),
    bal_scale_(p.balance ? p.weights.complexity_match / static_cast<double>(p.m) : 0.0),
    size_(p.size), qhat_(p.qhat), phat_(p.phat), device_changed_(p.m, 0), module_changed_(p.n, 0),
    pair_row_(p.n, 0.0) {
  for (std::size_t j = 0; j < m_; ++j)
    limit_.push_back(p.capacity[j] * (1 + 1e-12));
  for (std::size_t i = 0; i < n_; ++i)
    square_.push_back(2 * bal_scale_ * qhat_[i] * qhat_[i]);
  for (std::size_t j = 0; j < m_; ++j)
    for (std::size_t l = 0; l < m_; ++l)
      exchange_.push_back(d(j, l) + d(l, j) - d(j, j) - d(l, l));
}

double placement_search::pair_weight(std::size_t i, std::size_t k) const noexcept {
  for (const auto& l : p_.links_of(i))
    if (l.other == k)
      return l.out + l.in;
  return 0;
}

void placement_search::reset(const std::vector<std::size_t>& a) {
  a_ = a;
  load_ = device_loads(p_, a_);
  share_.assign(p_.m, 0.0);
  for (std::size_t i = 0; i < p_.n; ++i)
    share_[a_[i]] += p_.qhat[i];
  t_.assign(n_ * m_, 0.0);
  for (std::size_t i = 0; i < n_; ++i)
    for (const auto& l : p_.links_of(i))
      for (std::size_t j = 0; j < m_; ++j)
        t(i, j) += l.out * d(j, a_[l.other]) + l.in * d(a_[l.other], j);
  u_.resize(n_ * m_);
  for (std::size_t i = 0; i < n_; ++i)
    for (std::size_t j = 0; j < m_; ++j)
      u(i, j) = conn_scale_ * t(i, j) + 2 * bal_scale_ * qhat_[i] * (share_[j] - phat_[j]);
  cost_ = placement_cost(p_, a_);
  forget_swaps();
}

bool placement_search::feasible() const noexcept { return fits(p_, load_); }

// With B_j = share_j - phat_j, the balance term's change for moving share s from p to q is
// 2 s (B_q - B_p) + 2 s^2, linear in B but for the square. u(i, j) folds module i's connection
// cost on j and the linear balance part together, so a move or a swap is a few table reads:
//   move i to q:   u(i, q) - u(i, a_i) + 2 w_b s_i^2
//   swap i and k:  u(i, a_k) - u(i, a_i) + u(k, a_i) - u(k, a_k) + 2 w_b (s_i - s_k)^2
//                  + w_c (Chat_ik + Chat_ki) (D_pq + D_qp - D_pp - D_qq)   (p = a_i, q = a_k)
// where the last line corrects for i and k each counting the other at its old place.
// Precondition of both: the module(s) change device.
double placement_search::move_delta(std::size_t i, std::size_t q) const {
  return u(i, q) - u(i, a_[i]) + square_[i];
}

double placement_search::swap_delta(std::size_t i, std::size_t k) const {
  const auto di = a_[i], dk = a_[k];
  const double s = qhat_[i] - qhat_[k];
  return u(i, dk) - u(i, di) + u(k, di) - u(k, dk) + 2 * bal_scale_ * s * s +
         conn_scale_ * pair_weight(i, k) * exchange(di, dk);
}

bool placement_search::move_fits(std::size_t i, std::size_t q) const {
  return load_[q] + size_[i] <= limit_[q];
}

bool placement_search::swap_fits(std::size_t i, std::size_t k) const {
  const auto di = a_[i], dk = a_[k];
  return load_[dk] - size_[k] + size_[i] <= limit_[dk] &&
         load_[di] - size_[i] + size_[k] <= limit_[di];
}

void placement_search::move(std::size_t i, std::size_t q) {
  const auto from = a_[i];
  if (from == q)
    return;
  cost_ += move_delta(i, q);
  for (const auto& l : p_.links_of(i)) {
    // t(k, j) counts Chat_ki Dhat(j, a_i) + Chat_ik Dhat(a_i, j) for its neighbour i
    const auto k = l.other;
    const double c_ki = l.in, c_ik = l.out;
    for (std::size_t j = 0; j < m_; ++j) {
      const double dt = c_ki * (d(j, q) - d(j, from)) + c_ik * (d(q, j) - d(from, j));
      t(k, j) += dt;
      u(k, j) += conn_scale_ * dt;
    }
  }
  load_[from] -= size_[i];
  load_[q] += size_[i];
  share_[from] -= qhat_[i];
  share_[q] += qhat_[i];
  a_[i] = q;
  note_move(i, from, q);
  work_ += p_.links_of(i).size() * m_ + n_;
  // B changed on two devices: so did the balance part of their columns of u.
  const double shift = 2 * bal_scale_ * qhat_[i];
  for (std::size_t k = 0; k < n_; ++k) {
    u(k, from) -= shift * qhat_[k];
    u(k, q) += shift * qhat_[k];
  }
}

bool placement_search::repair() {
  while (!feasible()) {
    // Cheapest single move off an overflowing device onto one with room.
    double best = std::numeric_limits<double>::infinity();
    std::size_t best_i = 0, best_q = 0;
    for (std::size_t i = 0; i < p_.n; ++i) {
      if (load_[a_[i]] <= p_.capacity[a_[i]] * (1 + 1e-12))
        continue;
      for (std::size_t q = 0; q < p_.m; ++q)
        if (q != a_[i] && move_fits(i, q)) {
          const double d = move_delta(i, q);
          if (d < best) {
            best = d;
            best_i = i;
            best_q = q;
          }
        }
    }
    if (best < std::numeric_limits<double>::infinity()) {
      move(best_i, best_q);
      continue;
    }
    // No room anywhere for a whole module: trade a module of an overflowing device for a
    // smaller one, the largest relief first.
    double relief = 0;
    std::size_t swap_i = 0, swap_k = 0;
    for (std::size_t i = 0; i < p_.n; ++i) {
      if (load_[a_[i]] <= p_.capacity[a_[i]] * (1 + 1e-12))
        continue;
      for (std::size_t k = 0; k < p_.n; ++k)
        if (a_[k] != a_[i] && p_.size[k] < p_.size[i] &&
            load_[a_[k]] - p_.size[k] + p_.size[i] <= p_.capacity[a_[k]] * (1 + 1e-12) &&
            p_.size[i] - p_.size[k] > relief) {
          relief = p_.size[i] - p_.size[k];
          swap_i = i;
          swap_k = k;
        }
    }
    if (relief == 0)
      return false;
    swap(swap_i, swap_k);
  }
  return true;
}

void placement_search::descend() {
  for (;;) {
    // Costs shrink like 1/n^2, so "better" is relative to the current cost.
    candidate best{-relative_tolerance * std::abs(cost_), 0, 0, false, false};
    find_best_move(best);
    find_best_swap(best);
    if (!best.found)
      return;
    if (best.is_swap)
      swap(best.i, best.j);
    else
      move(best.i, best.j);
  }
}

void placement_search::find_best_move(candidate& best) {
  work_ += n_ * m_;
  for (std::size_t i = 0; i < n_; ++i)
    for (std::size_t q = 0; q < m_; ++q)
      if (q != a_[i] && move_fits(i, q)) {
        const double d = move_delta(i, q);
        if (d < best.delta)
          best = {d, i, q, false, true};
      }
}

void placement_search::swap(std::size_t i, std::size_t k) {
  const auto di = a_[i];
  move(i, a_[k]);
  move(k, di);
}

std::optional<placement_search::step> placement_search::random_step(std::mt19937_64& rng) const {
  for (int tries = 0; tries < 8; ++tries) {
    const auto i = static_cast<std::size_t>(rng() % p_.n);
    if (rng() % 2 == 0) {
      const auto q = static_cast<std::size_t>(rng() % p_.m);
      if (q != a_[i] && move_fits(i, q))
        return step{i, q, false, move_delta(i, q)};
    } else {
      const auto k = static_cast<std::size_t>(rng() % p_.n);
      if (a_[k] != a_[i] && swap_fits(i, k))
        return step{i, k, true, swap_delta(i, k)};
    }
  }
  return std::nullopt;
}

void placement_search::perturb(std::size_t strength, std::mt19937_64& rng) {
  // Groups of up to three times the strength: a chain's optimum moves whole segments between
  // devices, which kicks of a few modules rarely reach (mean J / J* 1.025 against 1.048 over
  // the reference set's n >= 16 and three seeds).
  if (rng() % 2 == 0 && move_group(strength * (1 + rng() % 3), rng))
    return;
  for (std::size_t done = 0, tries = 0; done < strength && tries < 20 * strength; ++tries)
    if (auto x = random_step(rng)) {
      if (x->is_swap)
        swap(x->i, x->j);
      else
        move(x->i, x->j);
      ++done;
    }
}

bool placement_search::move_group(std::size_t size, std::mt19937_64& rng) {
  // A random module and up to size - 1 of its neighbours on the same device, strongest links
  // first, all to one other device: single steps cannot carry a connected cluster across,
  // since each of them raises the cut before the last one lowers it.
  const auto seed = static_cast<std::size_t>(rng() % n_);
  const auto from = a_[seed];
  std::vector<std::size_t> group{seed};
  double group_size = size_[seed];
  for (std::size_t g = 0; g < group.size() && group.size() < size; ++g) {
    const auto links = p_.links_of(group[g]);
    std::vector<link> next(links.begin(), links.end());
    std::sort(next.begin(), next.end(),
              [](const link& x, const link& y) { return x.out + x.in > y.out + y.in; });
    for (const auto& l : next)
      if (a_[l.other] == from && std::find(group.begin(), group.end(), l.other) == group.end() &&
          group.size() < size) {
        group.push_back(l.other);
        group_size += size_[l.other];
      }
  }
  if (group.size() < 2)
    return false;
  const auto to = static_cast<std::size_t>(rng() % m_);
  if (to == from || load_[to] + group_size > limit_[to])
    return false;
  for (std::size_t k : group)
    move(k, to);
  return true;
}

void placement_search::iterate(budget limit, std::mt19937_64& rng) {
  if (n_ < 2 || m_ < 2)
    return;
  descend();
  const auto save = [&] {
    work_ += 2 * n_ * m_; // copying t and u
    return state{a_, load_, share_, t_, u_, cost_};
  };
  const auto restore = [&](const state& x) {
    a_ = x.a;
    load_ = x.load;
    share_ = x.share;
    t_ = x.t;
    u_ = x.u;
    cost_ = x.cost;
    forget_swaps();
    work_ += 2 * n_ * m_;
  };
  auto current = save();
  auto best = current;
  std::size_t since_best = 0;
  const auto work_limit = limit.work > std::numeric_limits<std::uint64_t>::max() - work_
                            ? std::numeric_limits<std::uint64_t>::max()
                            : work_ + limit.work;
  for (std::size_t r = 0; r < limit.rounds && work_ < work_limit; ++r) {
    if (since_best >= stall_rounds) {
      // The walk is stuck in one basin: start over from a random placement (made to fit) and
      // carry on from wherever its descent lands, good or not. The best stays aside.
      std::vector<std::size_t> fresh(n_);
      for (auto& j : fresh)
        j = static_cast<std::size_t>(rng() % m_);
      reset(fresh);
      if (!repair())
        restore(best);
      descend();
      current = save();
      since_best = 0;
      continue;
    }
    perturb(3 + rng() % 4, rng);
    descend();
    ++since_best;
    if (cost_ <= current.cost) { // equal too: drifting across a plateau helps
      current = save();
      if (cost_ < best.cost * (1 - relative_tolerance)) {
        best = current;
        since_best = 0;
      }
    } else {
      restore(current);
    }
  }
  restore(best);
  // Incremental updates drift by rounding; report the exact value.
  cost_ = placement_cost(p_, a_);
}

namespace {

/// Depth-first search for any fitting placement, largest modules first.
bool fit_exhaustively(const problem& p, const std::vector<std::size_t>& order, std::size_t depth,
                      std::vector<double>& room, std::vector<std::size_t>& a, std::size_t& budget) {
  if (depth == order.size())
    return true;
  if (budget == 0)
    return false;
  --budget;
  const auto i = order[depth];
  for (std::size_t j = 0; j < p.m; ++j) {
    if (room[j] + 1e-12 * p.capacity[j] < p.size[i])
      continue;
    // Devices with equal room left are interchangeable for feasibility: try one of them.
    bool seen = false;
    for (std::size_t k = 0; k < j && !seen; ++k)
      seen = room[k] == room[j];
    if (seen)
      continue;
    room[j] -= p.size[i];
    a[i] = j;
    if (fit_exhaustively(p, order, depth + 1, room, a, budget))
      return true;
    room[j] += p.size[i];
  }
  return false;
}

} // namespace

std::optional<std::vector<std::size_t>> enumerate_best(const problem& p,
                                                       std::size_t max_placements) {
  std::size_t count = 1;
  for (std::size_t i = 0; i < p.n; ++i)
    if (__builtin_mul_overflow(count, p.m, &count) || count > max_placements)
      return std::nullopt;
  std::optional<std::vector<std::size_t>> best;
  double best_cost = 0;
  std::vector<std::size_t> a(p.n, 0);
  for (std::size_t k = 0; k < count; ++k) {
    // a = the digits of k in base m
    for (std::size_t i = 0, rest = k; i < p.n; ++i, rest /= p.m)
      a[i] = rest % p.m;
    if (!fits(p, device_loads(p, a)))
      continue;
    const double cost = placement_cost(p, a);
    if (!best || cost < best_cost) {
      best = a;
      best_cost = cost;
    }
  }
  return best;
}

std::optional<std::vector<std::size_t>> construct_fitting(const problem& p, bool& exhausted) {
  std::vector<std::size_t> order(p.n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return p.size[x] > p.size[y]; });

  // Greedy: each module, largest first, where it adds least to J given the ones placed so far.
  std::vector<std::size_t> a(p.n, 0);
  std::vector<bool> placed(p.n, false);
  std::vector<double> load(p.m, 0.0), share(p.m, 0.0);
  bool greedy_fits = true;
  for (auto i : order) {
    double best = std::numeric_limits<double>::infinity();
    std::size_t best_j = p.m;
    for (std::size_t j = 0; j < p.m; ++j) {
      if (load[j] + p.size[i] > p.capacity[j] * (1 + 1e-12))
        continue;
      double conn = 0;
      for (const auto& l : p.links_of(i))
        if (placed[l.other])
          conn += l.out * p.dhat(j, a[l.other]) + l.in * p.dhat(a[l.other], j);
      double bal = 0;
      if (p.balance) {
        const double before = share[j] - p.phat[j], after = before + p.qhat[i];
        bal = after * after - before * before;
      }
      const double added = p.weights.connection * conn / static_cast<double>(p.n * p.n) +
                           p.weights.complexity_match * bal / static_cast<double>(p.m);
      if (added < best) {
        best = added;
        best_j = j;
      }
    }
    if (best_j == p.m) {
      greedy_fits = false;
      break;
    }
    a[i] = best_j;
    placed[i] = true;
    load[best_j] += p.size[i];
    share[best_j] += p.qhat[i];
  }
  exhausted = false;
  if (greedy_fits)
    return a;

  std::vector<double> room = p.capacity;
  std::size_t budget = 2'000'000;
  if (fit_exhaustively(p, order, 0, room, a, budget))
    return a;
  exhausted = budget > 0;
  return std::nullopt;
}

namespace {

/// Kahn's algorithm over the links that go forward (out > 0), smallest index first; modules left
/// on a cycle follow in index order.
std::vector<std::size_t> order_along_connections(const problem& p) {
  std::vector<std::size_t> waiting(p.n, 0);
  for (std::size_t i = 0; i < p.n; ++i)
    for (const auto& l : p.links_of(i))
      if (l.in > 0)
        ++waiting[i];
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < p.n; ++i)
    if (waiting[i] == 0)
      ready.push(i);
  std::vector<std::size_t> order;
  std::vector<bool> placed(p.n, false);
  while (order.size() < p.n) {
    if (ready.empty()) // a cycle: take the first module not yet placed
      for (std::size_t i = 0; i < p.n; ++i)
        if (!placed[i]) {
          ready.push(i);
          break;
        }
    const auto i = ready.top();
    ready.pop();
    if (placed[i])
      continue;
    placed[i] = true;
    order.push_back(i);
    for (const auto& l : p.links_of(i))
      if (l.out > 0 && !placed[l.other] && --waiting[l.other] == 0)
        ready.push(l.other);
  }
  return order;
}

} // namespace

std::vector<std::size_t> contiguous_runs(const problem& p) {
  std::vector<std::size_t> a(p.n, 0);
  double total_power = 0;
  for (double x : p.phat)
    total_power += x;
  std::size_t device = 0;
  double done = 0, target = p.phat.empty() ? 0 : p.phat[0];
  for (std::size_t i : order_along_connections(p)) {
    // Next device once this one has its share (a module going where more of it falls).
    while (device + 1 < p.m && (p.phat[device] == 0 || done + p.qhat[i] / 2 > target))
      target += p.phat[++device];
    a[i] = total_power > 0 ? device : i * p.m / p.n;
    done += p.qhat[i];
  }
  return a;
}

} // namespace troupe::detail
