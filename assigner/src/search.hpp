// The discrete phase: from a start (machin's argmax, or a constructed placement), find a
// placement that fits every device's memory and has a low J, by local search over moves (one
// module to another device) and swaps (two modules trade devices), iterated with random
// perturbations.
#pragma once

#include "problem.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

namespace troupe::detail {

class placement_search {
public:
  explicit placement_search(const problem& p);

  /// Starts from `a` (which may overflow devices).
  void reset(const std::vector<std::size_t>& a);

  const std::vector<std::size_t>& assignment() const noexcept { return a_; }
  double cost() const noexcept { return cost_; }
  bool feasible() const noexcept;

  /// Moves modules off overflowing devices, cheapest first; false if it gets stuck.
  bool repair();

  /// Applies improving moves and swaps until none improves J. Keeps feasibility.
  void descend();

  /// How long iterate() goes on: until it has done `rounds` rounds or `work` of work, whichever
  /// comes first. Work counts what the search evaluates (a move or swap considered, an entry of
  /// a table updated), so a budget of work takes about the same time on every problem of a size,
  /// and the same on every machine load: unlike a clock, it keeps the result a function of the
  /// seed.
  struct budget {
    std::size_t rounds = std::numeric_limits<std::size_t>::max();
    std::uint64_t work = std::numeric_limits<std::uint64_t>::max();
  };

  /// Iterated local search: round after round, kick the placement with a few random feasible
  /// moves and swaps, descend again, and keep the result if it is no worse; after a long run
  /// without a new best, jump far from it and go on from there. Ends at the best placement seen.
  void iterate(budget limit, std::mt19937_64& rng);

private:
  friend struct placement_search_probe; // tests/assigner/search_test.cpp
  /// The best step found so far in a descent: move i to device j, or swap i and module j.
  struct candidate {
    double delta;
    std::size_t i, j;
    bool is_swap, found;
  };
  void find_best_move(candidate& best);
  // The swaps (search_swaps.cpp).
  void find_best_swap(candidate& best);
  void gather_by_device();
  candidate scan_block(std::size_t p, std::size_t q);
  void scan_row(std::size_t i, std::size_t q, candidate& best);
  void note_move(std::size_t i, std::size_t from, std::size_t to);
  void forget_swaps();
  double move_delta(std::size_t i, std::size_t q) const;
  double swap_delta(std::size_t i, std::size_t k) const;
  bool move_fits(std::size_t i, std::size_t q) const;
  bool swap_fits(std::size_t i, std::size_t k) const;
  void move(std::size_t i, std::size_t q);
  void perturb(std::size_t strength, std::mt19937_64& rng);
  bool move_group(std::size_t size, std::mt19937_64& rng);
  void swap(std::size_t i, std::size_t k);
  /// A random feasible move (k == n) or swap: (i, q or k, delta); nullopt after a few misses.
  struct step {
    std::size_t i, j;
    bool is_swap;
    double delta;
  };
  std::optional<step> random_step(std::mt19937_64& rng) const;

  /// Chat_ik + Chat_ki: what i and k trading places costs beyond their own moves.
  double pair_weight(std::size_t i, std::size_t k) const noexcept;

  // The problem's arrays, flat and row-major: the inner loops read them billions of times.
  double d(std::size_t j, std::size_t l) const noexcept { return dhat_[j * m_ + l]; }
  double& t(std::size_t i, std::size_t j) noexcept { return t_[i * m_ + j]; }
  double t(std::size_t i, std::size_t j) const noexcept { return t_[i * m_ + j]; }
  double& u(std::size_t i, std::size_t j) noexcept { return u_[i * m_ + j]; }
  double u(std::size_t i, std::size_t j) const noexcept { return u_[i * m_ + j]; }
  double exchange(std::size_t j, std::size_t l) const noexcept { return exchange_[j * m_ + l]; }

  const problem& p_;
  std::size_t n_, m_;
  std::vector<double> dhat_;
  double conn_scale_, bal_scale_; // weights and means of J's two terms
  std::vector<double> size_, qhat_, phat_, limit_;
  std::vector<double> square_; // 2 w_b s_i^2: the balance term's cost of moving module i
  std::vector<double> exchange_; // D_jl + D_lj - D_jj - D_ll
  // The best swap between each pair of devices p < q (at p * m + q), kept from one step of a
  // descent to the next. A move changes the balance columns of its two devices, so their pairs
  // are scanned again whole, and the rows of the moved module's neighbours, so other pairs are
  // scanned again along those rows only. Whatever replaces the whole state forgets them all.
  std::vector<candidate> pair_best_;
  bool swaps_known_ = false;
  std::vector<char> device_changed_, module_changed_;
  std::vector<std::size_t> changed_modules_;
  // Scan scratch: modules by device (device j's at device_start_[j] .. device_start_[j + 1]),
  // their shares and sizes gathered alike, and pair_weight(i, k) for the one module i being
  // scanned (zero elsewhere).
  std::vector<std::size_t> by_device_, device_start_;
  std::vector<double> gathered_share_, gathered_size_;
  std::vector<double> pair_row_;
  // Current state: assignment, memory and complexity share per device, J, and
  // t_(i, j) = sum over k != i of Chat_ik Dhat(j, a_k) + Chat_ki Dhat(a_k, j): the connection
  // cost module i would have on device j, so a move's effect on CONN is one subtraction.
  std::vector<std::size_t> a_;
  std::vector<double> load_;
  std::vector<double> share_;
  std::vector<double> t_;
  std::vector<double> u_; // see move_delta
  struct state {
    std::vector<std::size_t> a;
    std::vector<double> load, share, t, u;
    double cost;
  };
  double cost_ = 0;
  std::uint64_t work_ = 0;
};

/// The best fitting placement by enumerating all m^n of them, when there are at most
/// `max_placements`; nullopt when there are more, or when none fits.
std::optional<std::vector<std::size_t>> enumerate_best(const problem& p,
                                                       std::size_t max_placements);

/// A placement that fits, built greedily (largest modules first, each to the device where it
/// adds least to J among those with room), or by exhaustive search if that fails. nullopt if
/// none exists or none was found within the search limit (`exhausted` says which).
std::optional<std::vector<std::size_t>> construct_fitting(const problem& p, bool& exhausted);

/// The modules in an order along their connections (a topological order where the connections
/// allow one, module index breaking ties), cut into one run per device, each run holding about
/// the device's share of the compute: few connections cross, and the compute is balanced. May
/// not fit.
std::vector<std::size_t> contiguous_runs(const problem& p);

} // namespace troupe::detail
