#include "collective_cases.hpp"

#include "troupe/actors/error.hpp"

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

namespace troupe::testing {
namespace {

using namespace std::chrono_literals;

void check(bool condition, const std::string& what) {
  if (!condition)
    throw std::runtime_error("check failed: " + what);
}

/// Expects `call` to throw E whose message holds `text`.
template <class E, class F>
void require_throws(const std::string& what, const std::string& text, F&& call) {
  try {
    call();
  } catch (const E& e) {
    check(std::string{e.what()}.find(text) != std::string::npos,
          what + ": message '" + e.what() + "' lacks '" + text + "'");
    return;
  }
  check(false, what + ": nothing thrown");
}

/// test_cc_send_recv: 0 sends to 1; then a ring where each sends to the next.
void send_recv(troupe::collective_group& g) {
  if (g.rank() == 0)
    g.send(std::vector<float>{1, 1, 1}, 1);
  if (g.rank() == 1) {
    std::vector<float> t(3);
    check(g.recv(t, 0) == 0 && t == std::vector<float>{1, 1, 1}, "recv from 0");
  }
  const int next = (g.rank() + 1) % g.size();
  const int previous = (g.rank() + g.size() - 1) % g.size();
  xt::xarray<double> mine = xt::xarray<double>::from_shape({2, 2});
  mine.fill(g.rank());
  auto sent = g.isend(mine, next, 7);
  xt::xarray<double> theirs = xt::xarray<double>::from_shape({2, 2});
  check(g.recv(theirs, previous, 7) == previous, "ring recv source");
  sent.wait();
  check(theirs(1, 1) == previous, "ring recv value");
}

/// test_cc_isend_irecv: 0 sends to the others, which receive from any source.
void isend_irecv(troupe::collective_group& g) {
  if (g.rank() == 0) {
    std::vector<std::int64_t> t{5, 6};
    auto a = g.isend(t, 1);
    auto b = g.isend(t, 2);
    a.wait(10s);
    b.wait(10s);
    check(a.ready() && b.ready(), "isend ready after wait");
  } else {
    std::vector<std::int64_t> t(2);
    auto h = g.irecv(t);
    check(h.wait(10s) == 0, "any-source irecv returns the sender 0");
    check(t == std::vector<std::int64_t>{5, 6}, "irecv value");
  }
}

void broadcast(troupe::collective_group& g) {
  xt::xtensor<float, 2> t = xt::zeros<float>({2, 3});
  if (g.rank() == 1)
    t.fill(4.5f);
  g.broadcast(t, 1);
  check(t(1, 2) == 4.5f && t(0, 0) == 4.5f, "broadcast from 1");
  std::vector<int> v(4, g.rank());
  g.broadcast_async(v, 2).wait();
  check(v == std::vector<int>(4, 2), "broadcast_async from 2");
}

void all_reduce(troupe::collective_group& g) {
  const float r = static_cast<float>(g.rank() + 1); // 1, 2, 3
  xt::xarray<float> t = xt::xarray<float>::from_shape({2, 3});
  t.fill(r);
  g.all_reduce(t);
  check(t(1, 1) == 6.0f, "all_reduce sum");
  for (auto [op, expected] :
       {std::pair{troupe::reduce_op::product, 6.0f}, std::pair{troupe::reduce_op::min, 1.0f},
        std::pair{troupe::reduce_op::max, 3.0f}}) {
    std::vector<float> v(5, r);
    g.all_reduce(v, op);
    check(v[4] == expected, "all_reduce op " + std::to_string(static_cast<int>(op)));
  }
  std::vector<double> a(3, r);
  auto h = g.all_reduce_async(a);
  h.wait(10s);
  check(h.ready() && a[0] == 6.0, "all_reduce_async");
  // Around 1 KiB, where MPI's shape check stops carrying the tensor itself.
  for (const std::size_t n : {255, 256, 257}) {
    std::vector<float> around(n, r);
    g.all_reduce(around, troupe::reduce_op::max);
    check(around.front() == 3.0f && around.back() == 3.0f,
          "all_reduce of " + std::to_string(n) + " floats");
  }
}

/// test_cc_reduce: only the destination gets the sum.
void reduce(troupe::collective_group& g) {
  std::vector<int> t(3, g.rank() + 1);
  g.reduce(t, 0);
  if (g.rank() == 0)
    check(t == std::vector<int>(3, 6), "reduce at 0");
  std::vector<int> m(2, g.rank());
  g.reduce_async(m, 2, troupe::reduce_op::max).wait();
  if (g.rank() == 2)
    check(m == std::vector<int>(2, 2), "reduce_async max at 2");
}

void all_gather(troupe::collective_group& g) {
  std::vector<std::vector<float>> out(3, std::vector<float>(2));
  g.all_gather(out, std::vector<float>(2, static_cast<float>(g.rank())));
  for (int r = 0; r < 3; ++r)
    check(out[r] == std::vector<float>(2, static_cast<float>(r)),
          "all_gather slot " + std::to_string(r));
  std::vector<xt::xarray<int>> xs(3, xt::xarray<int>::from_shape({2}));
  xt::xarray<int> mine = xt::xarray<int>::from_shape({2});
  mine.fill(g.rank() * 10);
  g.all_gather_async(xs, mine).wait();
  check(xs[2](1) == 20 && xs[1](0) == 10, "all_gather_async");
}

void gather(troupe::collective_group& g) {
  std::vector<double> t(2, g.rank() + 0.5);
  if (g.rank() == 0) {
    std::vector<std::vector<double>> out(3, std::vector<double>(2));
    g.gather(t, out, 0);
    for (int r = 0; r < 3; ++r)
      check(out[r][1] == r + 0.5, "gather slot " + std::to_string(r));
  } else {
    g.gather(t, 0);
  }
}

void scatter(troupe::collective_group& g) {
  std::vector<std::int16_t> t(2);
  if (g.rank() == 0) {
    std::vector<std::vector<std::int16_t>> in{{0, 0}, {1, 1}, {2, 2}};
    g.scatter(t, in, 0);
  } else {
    g.scatter(t, 0);
  }
  check(t == std::vector<std::int16_t>(2, static_cast<std::int16_t>(g.rank())), "scatter");
}

void barrier(troupe::collective_group& g) {
  g.barrier();
  g.barrier_async().wait(10s);
}

/// Every arithmetic element type travels and sums as itself.
template <class T>
void round_trip(troupe::collective_group& g) {
  const std::string name = troupe::detail::element_name(troupe::detail::element_type_of<T>());
  xt::xtensor<T, 2> t = xt::xtensor<T, 2>::from_shape({2, 2});
  t.fill(static_cast<T>(g.rank() == 0 ? 1 : 0));
  g.broadcast(t, 0);
  check(t(1, 1) == static_cast<T>(1), name + " broadcast");
  xt::xtensor<T, 1> v = xt::xtensor<T, 1>::from_shape({3}); // std::vector<bool> is not contiguous
  v.fill(static_cast<T>(1));
  g.all_reduce(v);
  const T expected = std::is_same_v<T, bool> ? static_cast<T>(true) : static_cast<T>(3);
  check(v(2) == expected, name + " all_reduce");
}

void every_type(troupe::collective_group& g) {
  round_trip<bool>(g);
  round_trip<std::int8_t>(g);
  round_trip<std::uint8_t>(g);
  round_trip<std::int16_t>(g);
  round_trip<std::uint16_t>(g);
  round_trip<std::int32_t>(g);
  round_trip<std::uint32_t>(g);
  round_trip<std::int64_t>(g);
  round_trip<std::uint64_t>(g);
  round_trip<float>(g);
  round_trip<double>(g);
  round_trip<long double>(g);
  round_trip<char>(g);
}

/// Members that disagree all hear so, naming both sides, and the group still
/// works after.
void mismatches(troupe::collective_group& g, const troupe::collective_options& options) {
  if (options.check_shapes) {
    require_throws<troupe::invalid_argument>("shapes", "rank 2 calls all_reduce of float32[3]",
                                             [&] {
                                               std::vector<float> t(g.rank() == 2 ? 3 : 2, 1.0f);
                                               g.all_reduce(t);
                                             });
    require_throws<troupe::invalid_argument>("sizes across 1 KiB", "float32[257]", [&] {
      std::vector<float> t(g.rank() == 1 ? 257 : 256, 1.0f);
      g.all_reduce(t);
    });
    require_throws<troupe::invalid_argument>("types", "float64[2]", [&] {
      if (g.rank() == 1) {
        std::vector<double> t(2);
        g.broadcast(t, 0);
      } else {
        std::vector<float> t(2);
        g.broadcast(t, 0);
      }
    });
  }
  std::vector<std::vector<float>> two(2, std::vector<float>(2));
  require_throws<troupe::invalid_argument>("output list", "2 outputs for a group of 3",
                                           [&] { g.all_gather(two, std::vector<float>(2)); });
  std::vector<std::vector<float>> misshapen(3, std::vector<float>(5));
  require_throws<troupe::invalid_argument>("output shape", "output 0 is float32[5]",
                                           [&] { g.all_gather(misshapen, std::vector<float>(2)); });
  if (g.rank() == 0)
    g.send(std::vector<float>(4, 1.0f), 1, 3);
  if (g.rank() == 1) {
    std::vector<double> wrong(4);
    require_throws<troupe::invalid_argument>("recv type", "rank 0 sent float32[4]",
                                             [&] { g.recv(wrong, 0, 3); });
  }
  std::vector<int> t(1, 1);
  g.all_reduce(t);
  check(t[0] == 3, "the group works after the mismatches");
}

void bad_arguments(troupe::world& world, troupe::collective_group& g) {
  std::vector<float> t(1);
  require_throws<troupe::invalid_argument>("rank", "rank 3 is not in the group",
                                           [&] { g.broadcast(t, 3); });
  require_throws<troupe::invalid_argument>("self", "is this member itself",
                                           [&] { g.send(t, g.rank()); });
  require_throws<troupe::invalid_argument>("tag", "tag -1",
                                           [&] { g.send(t, (g.rank() + 1) % g.size(), -1); });
  require_throws<troupe::invalid_argument>("duplicate", "listed twice", [&] {
    troupe::create_collective_group(world, {0, 0});
  });
  require_throws<troupe::invalid_argument>("outside", "rank 5 is not in the world", [&] {
    troupe::create_collective_group(world, {0, 5});
  });
}

/// A group of a subset: the member outside gets none.
void subset(troupe::world& world, const troupe::collective_options& options) {
  auto pair = troupe::create_collective_group(world, {2, 0}, options);
  check(pair.has_value() == (world.rank() != 1), "membership of {0, 2}");
  if (!pair)
    return;
  check(pair->size() == 2 && pair->rank() == (world.rank() == 0 ? 0 : 1), "relative rank");
  check(pair->world_ranks() == std::vector<int>{0, 2}, "world ranks");
  std::vector<int> t(2, world.rank());
  pair->all_reduce(t);
  check(t == std::vector<int>(2, 2), "all_reduce in the subset");
  std::vector<int> never(1);
  auto waiting = pair->irecv(never, collective_group::any_source,
                             99); // nobody sends on 99
  pair->destroy();
  require_throws<troupe::state_error>("destroyed", "destroyed", [&] { pair->barrier(); });
  require_throws<troupe::state_error>("a receive pending at destroy", "destroyed",
                                      [&] { waiting.wait(10s); });
}

/// Two groups used from two threads at once.
void two_groups_two_threads(troupe::world& world, const troupe::collective_options& options) {
  auto a = troupe::create_collective_group(world, {0, 1, 2}, options);
  auto b = troupe::create_collective_group(world, {0, 1, 2}, options);
  auto work = [](troupe::collective_group& g, float base, bool& ok) {
    ok = true;
    for (int i = 0; i < 40; ++i) {
      std::vector<float> t(64, base + static_cast<float>(i));
      g.all_reduce(t);
      ok = ok && t[63] == 3 * (base + static_cast<float>(i));
    }
  };
  bool a_ok = false;
  bool b_ok = false;
  std::thread other{[&] { work(*b, 1000.0f, b_ok); }};
  work(*a, 0.0f, a_ok);
  other.join();
  check(a_ok && b_ok, "two groups from two threads");
}

/// A group and a handle moved from throw state_error naming their type; the ones moved to work.
void moved_from(troupe::collective_group& g) {
  auto kept = std::move(g);
  // NOLINTBEGIN(bugprone-use-after-move): what this case is about
  require_throws<troupe::state_error>("an operation on a group moved from",
                                      "empty troupe::collective_group", [&] { g.barrier(); });
  require_throws<troupe::state_error>("rank() of a group moved from",
                                      "empty troupe::collective_group", [&] { (void)g.rank(); });
  auto handle = kept.barrier_async();
  auto waited = std::move(handle);
  require_throws<troupe::state_error>("a wait on a handle moved from",
                                      "empty troupe::collective_handle", [&] { handle.wait(); });
  require_throws<troupe::state_error>("ready() on a handle moved from",
                                      "empty troupe::collective_handle",
                                      [&] { (void)handle.ready(); });
  // NOLINTEND(bugprone-use-after-move)
  waited.wait(10s);
  g = std::move(kept);
  std::vector<int> t(3, 1);
  g.all_reduce(t);
  check(t == std::vector<int>(3, 3), "the group moved back works");
}

/// A member that stays but never calls create_collective_group: the others time out, not hang.
void a_member_that_never_comes(troupe::world& world, const troupe::collective_options& options) {
  if (world.rank() == 2) {
    std::this_thread::sleep_for(3s); // in the world, elsewhere (leaving would be peer_lost)
    return;
  }
  auto quick = options;
  quick.timeout = 1500ms;
  require_throws<troupe::timeout_error>("a missing member", "within", [&] {
    troupe::create_collective_group(world, {0, 1, 2}, quick);
  });
}

} // namespace

void run_collective_cases(troupe::world& world, const troupe::collective_options& options) {
  auto group = troupe::create_collective_group(world, {0, 1, 2}, options);
  check(group.has_value() && group->size() == 3 && group->rank() == world.rank(), "group");
  check(group->backend() == options.backend, "backend");
  auto& g = *group;
  send_recv(g);
  isend_irecv(g);
  broadcast(g);
  all_reduce(g);
  reduce(g);
  all_gather(g);
  gather(g);
  scatter(g);
  barrier(g);
  moved_from(g);
  every_type(g);
  mismatches(g, options);
  bad_arguments(world, g);
  g.barrier();
  subset(world, options);
  two_groups_two_threads(world, options);
  g.barrier();
  a_member_that_never_comes(world, options); // last: the members' group counts part here
  // Nobody leaves while another may still be timing out: a member that left first would turn
  // the others' timeout_error into peer_lost.
  world.create_rpc_group("collective cases done", world.members()).barrier();
}

} // namespace troupe::testing
