// graph/'s distributed partition (other_seeds.md §2c 13-16, 18, 19, 21-23) on ranks of a troupe
// world with a gloo collective group: this test is rank 0 and starts the others.
#include "../allocation_counter.hpp"
#include "../world/world_test_support.hpp"

#include "troupe/collectives/collective_group.hpp"
#include "troupe/graph/distributed.hpp"
#include "troupe/graph/errors.hpp"

namespace troupe::testing {
namespace {

using namespace troupe::graph;

xt::xarray<double> x_of(int rank) { return xt::ones<double>({4}) * (rank + 1.0); }

tensor_map run(collective_group& g, const node_ptr& outputs, std::size_t* parts = nullptr) {
  const auto p = find_distributed_partition(g, outputs);
  verify_distributed_partition(g, p); // every partition found here must pass
  if (parts != nullptr)
    *parts = p.parts.size();
  return execute_distributed_partition(p, g, {{"x", x_of(g.rank())}});
}

void same(const xt::xarray<double>& got, const xt::xarray<double>& want, const std::string& what) {
  require(got.shape() == want.shape() && xt::allclose(got, want), what);
}

// §2c 13: y = x + (x of the next rank), through a ring of sends.
void ring(collective_group& g) {
  const int left = (g.rank() + g.size() - 1) % g.size(), right = (g.rank() + 1) % g.size();
  auto x = placeholder("x", {4});
  auto y = x + staple_distributed_send(x, left, "42", make_distributed_recv(right, "42", {4}));
  same(run(g, make_outputs({{"out", y}})).at("out"), x_of(g.rank()) + x_of(right), "ring");
}

// §2c 14 and 15: no communication is one part; one array under two names.
void no_communication(collective_group& g) {
  auto x = placeholder("x", {4});
  std::size_t parts = 0;
  auto o = 4.0 * (2.0 * x);
  auto values = run(g, make_outputs({{"out1", 2.0 * x}, {"out2", o}, {"out3", o}}), &parts);
  require(parts == 1, "one part without communication");
  same(values.at("out1"), 2.0 * x_of(g.rank()), "2x");
  same(values.at("out2"), 8.0 * x_of(g.rank()), "8x");
  same(values.at("out3"), 8.0 * x_of(g.rank()), "8x again");
}

// §2c 16: a receive as an output.
void receive_as_output(collective_group& g) {
  auto x = placeholder("x", {4});
  const auto out = g.rank() == 0 ? staple_distributed_send(2.0 * x, 1, "r", x)
                                 : (g.rank() == 1 ? make_distributed_recv(0, "r", {4}) : x);
  const auto got = run(g, make_outputs({{"out", out}})).at("out");
  same(got, g.rank() == 1 ? xt::xarray<double>(2.0 * x_of(0)) : x_of(g.rank()),
       "a received output");
}

/// §2c 21's DAGs: rank 1 sends first; rank 0 answers with twice what it got.
node_ptr crossed_pair_outputs(collective_group& g) {
  auto x = placeholder("x", {4});
  node_ptr out = x;
  if (g.rank() == 0)
    out = staple_distributed_send(2.0 * make_distributed_recv(1, "42", {4}), 1, "43", x);
  if (g.rank() == 1)
    out = staple_distributed_send(x, 0, "42", make_distributed_recv(0, "43", {4}));
  return make_outputs({{"out", out}});
}

void crossed_pair(collective_group& g) {
  same(run(g, crossed_pair_outputs(g)).at("out"),
       g.rank() == 1 ? xt::xarray<double>(2.0 * x_of(1)) : x_of(g.rank()), "crossed pair");
}

// §2c 19: y = x + x of the next rank, z = y + y of the next rank.
void periodic_exchange(collective_group& g) {
  const int left = (g.rank() + g.size() - 1) % g.size(), right = (g.rank() + 1) % g.size();
  auto x = placeholder("x", {4});
  auto y = x + staple_distributed_send(x, left, "42", make_distributed_recv(right, "42", {4}));
  auto z = y + staple_distributed_send(y, left, "43", make_distributed_recv(right, "43", {4}));
  const auto right2 = (right + 1) % g.size();
  const auto y_here = x_of(g.rank()) + x_of(right);
  const auto y_right = x_of(right) + x_of(right2);
  same(run(g, make_outputs({{"z", z}})).at("z"), y_here + y_right, "periodic exchange");
}

// §2c 17: y, kept (materialize_with_mpms's choice), is computed once in the first part and read
// by the last, rather than computed again there.
void promotion(collective_group& g) {
  auto x = placeholder("x", {4});
  node_ptr q = x;
  if (g.rank() == 0) {
    auto y = 2.0 * x;
    auto w = make_distributed_recv(1, "43", {4});
    q = staple_distributed_send(2.0 * y, 1, "42", y + w);
  }
  if (g.rank() == 1) {
    auto z = make_distributed_recv(0, "42", {4});
    q = staple_distributed_send(2.0 * z, 0, "43", z / constant(2.0) + 2.0 * z);
  }
  const auto p = find_distributed_partition(g, make_outputs({{"q", q}}));
  if (g.rank() == 0) {
    require(p.toposorted_part_ids.size() == 2, "two parts on rank 0");
    const auto& first = p.parts.at(p.toposorted_part_ids[0]);
    const auto& second = p.parts.at(p.toposorted_part_ids[1]);
    require(first.output_names.size() == 2, "the first part outputs z and y");
    require(second.partition_input_names.size() == 2, "the last part reads y and w");
  }
  verify_distributed_partition(g, p);
  const auto values = execute_distributed_partition(p, g, {{"x", x_of(g.rank())}});
  if (g.rank() < 2)
    same(values.at("q"), 10.0 * x_of(0), "q = 10x");
}

// §2c 23.
void numbered_tags(collective_group& g) {
  auto x = placeholder("x", {4});
  node_ptr out = x;
  if (g.rank() == 0)
    out = staple_distributed_send(x, 1, "alpha", staple_distributed_send(x, 1, "beta", x));
  if (g.rank() == 1)
    out = make_distributed_recv(0, "alpha", {4}) + make_distributed_recv(0, "beta", {4});
  auto [numbered, next] =
    number_distributed_tags(find_distributed_partition(g, make_outputs({{"o", out}})), 4242);
  require(next == 4244, "next tag after two");
  if (g.rank() == 0) {
    std::set<std::int64_t> wire;
    for (const auto& [pid, part] : numbered.parts)
      for (const auto& [name, sends] : part.name_to_send_nodes)
        for (const auto& s : sends)
          if (s.tag == "alpha")
            require(s.int_tag == 4242, "alpha is 4242");
  }
  const auto got = execute_distributed_partition(numbered, g, {{"x", x_of(g.rank())}});
  if (g.rank() == 1)
    same(got.at("o"), 2.0 * x_of(0), "numbered tags travel");
}

// A hundred exchanges, each waiting on the one before: every rank's v becomes the sum of both
// ranks' v, a hundred times over (3 * 2^99 from 1 and 2); a part per exchange, and more
// receives than one machine word of bits.
void a_hundred_chained_exchanges(collective_group& g) {
  const int other = 1 - g.rank();
  auto x = placeholder("x", {4});
  node_ptr v = x;
  for (int k = 0; k < 100; ++k) {
    const auto tag = "e" + std::to_string(k);
    v = staple_distributed_send(v, other, tag, v + make_distributed_recv(other, tag, {4}));
  }
  std::size_t parts = 0;
  same(run(g, make_outputs({{"v", v}}), &parts).at("v"),
       xt::ones<double>({4}) * std::ldexp(3.0, 99), "a hundred exchanges");
  require(parts == 101, "a part per exchange, and the last: " + std::to_string(parts));
}

/// Rank 0 sends v to rank 1 `rounds` times, each time adding what rank 1 sends back (half of
/// what it got): v = 2x * 1.5^rounds, over 2 * rounds parts, each waiting for the last.
node_ptr back_and_forth_outputs(collective_group& g, int rounds, std::int64_t n) {
  auto x = placeholder("x", {n});
  node_ptr out = x;
  if (g.rank() == 0) {
    out = 2.0 * x;
    for (int k = 0; k < rounds; ++k) {
      auto back = make_distributed_recv(1, "b" + std::to_string(k), {n});
      out = staple_distributed_send(out, 1, "a" + std::to_string(k), out + back);
    }
  }
  if (g.rank() == 1)
    for (int k = 0; k < rounds; ++k) {
      auto got = make_distributed_recv(0, "a" + std::to_string(k), {n});
      out = staple_distributed_send(got * 0.5, 0, "b" + std::to_string(k), out);
    }
  return make_outputs({{"v", out}});
}

// "Inputs freed after their last use": the arrays of 8 rounds of messages. The receives are
// posted up front, so their 8 buffers are all there at once; beyond them, an array received,
// sent or computed lives only until its last reader has run (or its send is done).
void arrays_are_freed_after_their_last_use(collective_group& g) {
  constexpr int rounds = 8;
  constexpr std::int64_t n = 128 * 1024; // 1 MiB of doubles
  constexpr std::size_t array_bytes = n * sizeof(double);
  const auto p = find_distributed_partition(g, back_and_forth_outputs(g, rounds, n));
  const xt::xarray<double> x = xt::ones<double>({n}) * (g.rank() + 1.0);
  tensor_map inputs{{"x", x}};
  const auto before = live_bytes();
  reset_peak();
  const auto values = execute_distributed_partition(p, g, std::move(inputs));
  const auto held = peak_bytes() - before;
  if (g.rank() == 0)
    same(values.at("v"), 2.0 * std::pow(1.5, rounds) * x, "v = 2x * 1.5^rounds");
  // Rank 0 at its fullest: the receive buffers, x or v_k, v_k+1, and the copy each send of
  // them reads (a sent v_k is read by the next part too). Holding on held 29 here.
  require(held <= (rounds + 5) * array_bytes, "rank " + std::to_string(g.rank()) + " held " +
                                                std::to_string(held / array_bytes) +
                                                " arrays at once");
}

/// Expects every rank's find_distributed_partition of its `out` to throw E.
template <class E>
void refused(collective_group& g, const node_ptr& out, const std::string& what) {
  try {
    find_distributed_partition(g, make_outputs({{"o", out}}));
  } catch (const E&) {
    return;
  }
  require(false, what + " was not refused");
}

// §2c 22: the same error on every rank, and the group goes on.
void errors(collective_group& g) {
  auto x = placeholder("x", {4});
  const bool zero = g.rank() == 0, one = g.rank() == 1;
  refused<missing_send>(g, one ? make_distributed_recv(0, "lonely", {4}) : x, "an unmatched recv");
  refused<missing_recv>(g, zero ? staple_distributed_send(x, 1, "nobody", x) : x,
                        "an unmatched send");
  refused<duplicate_recv>(g,
                          one ? make_distributed_recv(0, "d", {4}) +
                                  reduce(make_distributed_recv(0, "d", {5}), {0})
                              : (zero ? staple_distributed_send(x, 1, "d", x) : x),
                          "two receives of one id");
  refused<duplicate_send>(
    g,
    zero ? staple_distributed_send(x, 1, "d", staple_distributed_send(2.0 * x, 1, "d", x))
         : (one ? make_distributed_recv(0, "d", {4}) : x),
    "two sends of one id");
  // Sends 42 and 43 each carry data that needs the other's receive.
  refused<cycle_error>(
    g,
    zero ? staple_distributed_send(make_distributed_recv(1, "43", {4}), 1, "42", x)
         : (one ? staple_distributed_send(make_distributed_recv(0, "42", {4}), 0, "43", x) : x),
    "a cycle");
  refused<not_supported>(g, zero ? staple_distributed_send(x, 0, "self", x) : x, "a send to self");
  ring(g); // the group still works
}

// §2c 24 for a distributed partition: a cluster per part, sends and receives with rank and tag.
void drawn(collective_group& g) {
  const int left = (g.rank() + g.size() - 1) % g.size(), right = (g.rank() + 1) % g.size();
  auto x = placeholder("x", {4});
  auto y = x + staple_distributed_send(x, left, "42", make_distributed_recv(right, "42", {4}));
  const auto dot = get_dot_graph(find_distributed_partition(g, make_outputs({{"y", y}})));
  for (const auto& text :
       {std::string{"subgraph cluster_0 {\n    style=dashed;"}, std::string{"subgraph cluster_1"},
        "to rank " + std::to_string(left) + ", tag 42",
        "from rank " + std::to_string(right) + ", tag 42"})
    require(dot.find(text) != std::string::npos, "the picture shows '" + text + "'");
}

/// Expects verify_distributed_partition of `p` to throw E on every rank.
template <class E>
void unverified(collective_group& g, const distributed_graph_partition& p,
                const std::string& what) {
  try {
    verify_distributed_partition(g, p);
  } catch (const E&) {
    return;
  }
  require(false, what + " passed verification");
}

// verify_distributed_partition on partitions spoiled by hand.
void verification(collective_group& g) {
  const auto good = find_distributed_partition(g, crossed_pair_outputs(g));
  verify_distributed_partition(g, good);

  auto no_recv = good; // rank 1 forgets to receive what its last part reads
  if (g.rank() == 1)
    for (auto& [pid, part] : no_recv.parts)
      part.name_to_recv_node.clear();
  unverified<troupe::invalid_argument>(g, no_recv, "a part input nothing provides");

  auto no_send = good; // rank 0 forgets to send: rank 1's receive has no partner
  if (g.rank() == 0)
    for (auto& [pid, part] : no_send.parts)
      part.name_to_send_nodes.clear();
  unverified<missing_send>(g, no_send, "a receive without a send");

  auto late_send = good; // rank 1 sends 42 only in its last part, which waits for rank 0's 43
  if (g.rank() == 1) {
    auto& first = late_send.parts.begin()->second;
    auto& last = late_send.parts.rbegin()->second;
    last.name_to_send_nodes.insert(first.name_to_send_nodes.begin(),
                                   first.name_to_send_nodes.end());
    first.name_to_send_nodes.clear();
  }
  unverified<partition_induced_cycle>(g, late_send, "parts waiting in a circle");
}

/// A part that fails on rank 1 while messages are on their way: rank 1 gets the part's error
/// once its messages have ended (their buffers outlive them); rank 0, waiting in vain for
/// rank 1's send, fails too (peer_lost when rank 1 leaves the group, else the timeout), never
/// hangs.
void a_part_that_fails(troupe::world& world) {
  auto group = troupe::create_collective_group(world, {0, 1}, {.timeout = std::chrono::seconds{2}});
  auto& g = *group;
  auto x = placeholder("x", {4});
  auto y = placeholder("y", {4}); // rank 1 is not given y
  const auto out = g.rank() == 0
                     ? staple_distributed_send(x, 1, "f", make_distributed_recv(1, "g", {4}))
                     : staple_distributed_send(2.0 * y, 0, "g", make_distributed_recv(0, "f", {4}));
  const auto p = find_distributed_partition(g, make_outputs({{"o", out}}));
  try {
    execute_distributed_partition(p, g, {{"x", x_of(g.rank())}});
    require(false, "the failed part went unnoticed");
  } catch (const troupe::invalid_argument& e) {
    require(g.rank() == 1 && std::string{e.what()}.find("'y'") != std::string::npos,
            std::string{"rank 1 names the missing input: "} + e.what());
  } catch (const troupe::timeout_error&) {
    require(g.rank() == 0, "only rank 0 times out");
  } catch (const troupe::peer_lost&) {
    require(g.rank() == 0, "only rank 0 loses its peer");
  }
}

void two_rank_cases(troupe::world& world) {
  auto group =
    troupe::create_collective_group(world, {0, 1}, {.timeout = std::chrono::seconds{20}});
  auto& g = *group;
  ring(g);
  no_communication(g);
  receive_as_output(g);
  crossed_pair(g);
  periodic_exchange(g);
  promotion(g);
  numbered_tags(g);
  errors(g);
  verification(g);
  drawn(g);
  arrays_are_freed_after_their_last_use(g);
  a_hundred_chained_exchanges(g);
  a_part_that_fails(world);
  ring(g); // the first group is untouched
}

// §2c 18: one array to two ranks.
void one_array_to_two_ranks(troupe::world& world) {
  auto group =
    troupe::create_collective_group(world, {0, 1, 2}, {.timeout = std::chrono::seconds{20}});
  auto& g = *group;
  auto x = placeholder("x", {4});
  node_ptr out;
  if (g.rank() == 0) {
    auto z = 8.0 * x;
    out = staple_distributed_send(z, 1, "t", staple_distributed_send(z, 2, "t", z));
  } else {
    out = make_distributed_recv(0, "t", {4});
  }
  same(run(g, make_outputs({{"z", out}})).at("z"), 8.0 * x_of(0), "z = 8x everywhere");
  ring(g);
  periodic_exchange(g);
}

TROUPE_ROLE(graph_two_ranks) { return as_member(two_rank_cases); }
TROUPE_ROLE(graph_three_ranks) { return as_member(one_array_to_two_ranks); }

/// Runs `cases` as rank 0 of a world of `ranks`, the others started as `role`.
void on_ranks(const char* role, int ranks, void (*cases)(troupe::world&)) {
  const int port = free_port();
  auto members = start_members(role, ranks, port);
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, ranks, port)};
  EXPECT_NO_THROW(cases(world));
  expect_clean_exits(members);
}

TEST(graph_distributed, pytato_cases_on_two_ranks) {
  on_ranks("graph_two_ranks", 2, two_rank_cases);
}

TEST(graph_distributed, one_array_sent_to_two_ranks_and_periodic_exchange_on_three) {
  on_ranks("graph_three_ranks", 3, one_array_to_two_ranks);
}

} // namespace
} // namespace troupe::testing
