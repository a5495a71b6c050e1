// graph/: pytato's acceptance cases (other_seeds.md §2c) that need no communication, and the
// reference evaluator.
#include "troupe/actors/serialization.hpp"
#include "troupe/graph/analysis.hpp"
#include "troupe/graph/dot.hpp"
#include "troupe/graph/errors.hpp"
#include "troupe/graph/evaluate.hpp"
#include "troupe/graph/materialize.hpp"
#include "troupe/graph/partition.hpp"
#include "troupe/graph/pool_partition.hpp"
#include "troupe/graph/serialization.hpp"
#include "troupe/pools/thread_pool.hpp"

#include <gtest/gtest.h>

#include <xtensor/xrandom.hpp>

#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <random>
#include <thread>
#include <unordered_map>

namespace troupe::graph {
namespace {

std::vector<std::string> kinds_of(const std::vector<node_ptr>& nodes) {
  std::vector<std::string> out;
  for (const auto& n : nodes)
    out.emplace_back(kind_name(n->what()));
  return out;
}

TEST(graph_nodes, are_equal_and_hashed_by_structure_tags_included) {
  auto a = placeholder("a", {3});
  auto b = placeholder("a", {3});
  EXPECT_NE(a, b);
  EXPECT_TRUE(*a == *b);
  EXPECT_EQ(a->hash(), b->hash());
  EXPECT_TRUE(*(a + 1.0) == *(b + 1.0));
  EXPECT_FALSE(*a->with_tag("stored") == *b);
  EXPECT_FALSE(*placeholder("a", {4}) == *a);
  EXPECT_FALSE(*(a + 1.0) == *(a + 2.0)) << "data compares by value";
}

TEST(graph_nodes, builders_refuse_bad_shapes_naming_them) {
  auto x = placeholder("x", {2, 3});
  EXPECT_THROW(x + placeholder("y", {4}), troupe::invalid_argument);
  EXPECT_THROW(reduce(x, {2}), troupe::invalid_argument);
  EXPECT_THROW(reshape(x, {5}), troupe::invalid_argument);
  EXPECT_THROW(transpose(x, {0, 0}), troupe::invalid_argument);
  EXPECT_THROW(einsum("ij,jk->ik", {x, x}), troupe::invalid_argument);
  EXPECT_THROW(elementwise("frobnicate", {x}), troupe::invalid_argument);
  try {
    stack({x, placeholder("y", {3, 2})});
    ADD_FAILURE();
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("(3, 2)"), std::string::npos) << e.what();
  }
}

TEST(graph_evaluate, computes_what_xtensor_computes) {
  auto x = placeholder("x", {2, 3});
  auto y = placeholder("y", {3});
  auto out = make_outputs({{"sum", reduce(x * y, {1})},
                           {"t", transpose(x)},
                           {"stack", stack({y, 2.0 * y}, 1)},
                           {"cat", concatenate({x, x}, 0)},
                           {"roll", roll(x, 1, 1)},
                           {"matmul", einsum("ij,j->i", {x, y})},
                           {"shape", reshape(x, {3, 2})}});
  xt::xarray<double> xv = {{1, 2, 3}, {4, 5, 6}};
  xt::xarray<double> yv = {1, 0, 2};
  auto v = evaluate(out, {{"x", xv}, {"y", yv}});
  EXPECT_EQ(v["sum"], (xt::xarray<double>{7, 16}));
  EXPECT_EQ(v["matmul"], (xt::xarray<double>{7, 16}));
  EXPECT_EQ(v["t"], xt::transpose(xv));
  EXPECT_EQ(v["stack"], (xt::xarray<double>{{1, 2}, {0, 0}, {2, 4}}));
  EXPECT_EQ(v["cat"].shape()[0], 4u);
  EXPECT_EQ(v["roll"], (xt::xarray<double>{{3, 1, 2}, {6, 4, 5}}));
  EXPECT_EQ(v["shape"](2, 1), 6.0);
  EXPECT_THROW(evaluate(out, {{"x", xv}}), troupe::invalid_argument) << "y is missing";
  EXPECT_THROW(evaluate(out, {{"x", yv}, {"y", yv}}), troupe::invalid_argument) << "x's shape";
}

TEST(graph_evaluate, in_float_every_operation_computes_in_float) {
  auto x = placeholder("x", {3}, dtype::float32);
  auto third = data(xt::xarray<double>{1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0});
  auto out = make_outputs({{"y", reduce(x * third, {0})}, {"z", elementwise("exp", {x})}});
  const xt::xarray<float> xv = {1.0F, 2.0F, 3.0F};
  const auto v = evaluate(out, basic_tensor_map<float>{{"x", xv}});
  static_assert(std::is_same_v<decltype(v), const basic_tensor_map<float>>);
  const float third_f = 1.0F / 3.0F; // the data node, rounded to float
  EXPECT_EQ(v.at("y")(), 1.0F * third_f + 2.0F * third_f + 3.0F * third_f);
  EXPECT_EQ(v.at("z"), xt::exp(xv));
  EXPECT_THROW(evaluate(out, basic_tensor_map<float>{}), troupe::invalid_argument);
}

// An element-wise node may compute into its operand's memory only when nothing else reads the
// operand: not an input, not an operand read twice, not a value that is also an output.
TEST(graph_evaluate, computing_in_place_never_overwrites_a_value_still_read) {
  auto x = placeholder("x", {3});
  auto e = elementwise("exp", {x});
  auto twice = e + e; // e read twice by one node
  auto kept = elementwise("sqrt", {e}); // e is also an output
  auto chain = elementwise("abs", {elementwise("neg", {2.0 * x})}); // reuse along the chain
  auto shaped = reshape(chain, {3, 1}) + x; // broadcast to (3, 3): the operand is too small
  const xt::xarray<double> xv = {0.0, 1.0, 2.0};
  const auto v = evaluate(
    make_outputs(
      {{"e", e}, {"twice", twice}, {"kept", kept}, {"chain", chain}, {"shaped", shaped}, {"x", x}}),
    {{"x", xv}});
  EXPECT_TRUE(xt::allclose(v.at("e"), xt::exp(xv)));
  EXPECT_TRUE(xt::allclose(v.at("twice"), 2.0 * xt::exp(xv)));
  EXPECT_TRUE(xt::allclose(v.at("kept"), xt::sqrt(xt::exp(xv))));
  EXPECT_EQ(v.at("chain"), 2.0 * xv);
  EXPECT_EQ(v.at("shaped"), xt::reshape_view(2.0 * xv, {3, 1}) + xv);
  EXPECT_EQ(v.at("x"), xv);
}

// §2c 1: a placeholder whose length is the size parameter n reads n, which comes first.
TEST(graph_analysis, topological_order_puts_children_first) {
  auto n = size_param("n");
  auto a = placeholder("a", {extent(n)});
  auto s = stack({a, 2.0 * a, a + 6.0});
  auto expr = einsum("ij,jk->ik", {s, transpose(s)});
  const auto kinds = kinds_of(topological_order(expr));
  const std::vector<std::string> expected{"size_param",  "placeholder", "data",
                                          "elementwise", "data",        "elementwise",
                                          "stack",       "transpose",   "einsum"};
  EXPECT_EQ(kinds, expected);
  EXPECT_EQ(expr->shape(), (shape_t{3, 3}));
  EXPECT_EQ(s->shape(), (shape_t{3, extent(n)}));
  const xt::xarray<double> av = {1, 2, 3, 4};
  const xt::xarray<double> sv = {{1, 2, 3, 4}, {2, 4, 6, 8}, {7, 8, 9, 10}}; // a, 2a, a + 6
  xt::xarray<double> want = xt::zeros<double>({3, 3});
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t k = 0; k < 3; ++k)
      for (std::size_t j = 0; j < 4; ++j)
        want(i, k) += sv(i, j) * sv(k, j);
  const auto got =
    evaluate(make_outputs({{"e", expr}}), {{"a", av}, {"n", xt::xarray<double>(4.0)}});
  EXPECT_EQ(got.at("e"), want);
}

// Shapes with size parameters: equal where their parameters are, refused where that cannot be
// known, bound by evaluate from the inputs.
TEST(graph_size_parameters, shapes_follow_their_parameters) {
  auto n = size_param("n"), m = size_param("m");
  auto a = placeholder("a", {extent(n), 2}), b = placeholder("b", {extent(n), 2});
  auto c = placeholder("c", {extent(m), 2});
  EXPECT_EQ((a + b)->shape(), (shape_t{extent(n), 2}));
  EXPECT_EQ(reduce(a, {0})->shape(), (shape_t{2}));
  EXPECT_EQ(reshape(a, {2, extent(n)})->shape(), (shape_t{2, extent(n)}));
  EXPECT_EQ(symbol_name(extent(n)), "n");
  EXPECT_EQ(describe(a->shape()), "(n, 2)");
  EXPECT_THROW(a + c, troupe::invalid_argument) << "n and m may differ";
  EXPECT_THROW(a + placeholder("d", {3, 2}), troupe::invalid_argument) << "n may not be 3";
  EXPECT_THROW(concatenate({a, b}, 0), troupe::invalid_argument);
  EXPECT_THROW(reshape(a, {2, extent(m)}), troupe::invalid_argument);
  EXPECT_THROW(make_distributed_recv(0, "t", {extent(n)}), troupe::invalid_argument);
  EXPECT_THROW(placeholder("e", {-7}), troupe::invalid_argument);
  EXPECT_THROW(extent(a), troupe::invalid_argument);

  const auto out = make_outputs({{"sum", reduce(a * b, {0})}, {"cat", concatenate({a, b}, 1)}});
  const xt::xarray<double> av = {{1, 2}, {3, 4}, {5, 6}};
  const auto v = evaluate(out, {{"a", av}, {"b", av}, {"n", xt::xarray<double>(3.0)}});
  EXPECT_EQ(v.at("sum"), (xt::xarray<double>{35, 56}));
  EXPECT_EQ(v.at("cat").shape()[1], 4u);
  EXPECT_THROW(evaluate(out, {{"a", av}, {"b", av}, {"n", xt::xarray<double>(4.0)}}),
               troupe::invalid_argument)
    << "a is not of length n";
  EXPECT_THROW(evaluate(out, {{"a", av}, {"b", av}}), troupe::invalid_argument) << "no n";
  EXPECT_THROW(evaluate(out, {{"a", av}, {"b", av}, {"n", xt::xarray<double>(2.5)}}),
               troupe::invalid_argument)
    << "n is not a whole number";
}

// The graph guide's tour: a DAG evaluated in double and float, cut into two parts that run on a
// thread pool, drawn and serialized.
TEST(graph_tour, evaluates_partitions_draws_and_serializes) {
  troupe::runtime rt;
  troupe::thread_pool pool{rt, {.workers = 2}};
  const xt::xarray<double> xs = xt::random::randn<double>({1000});
  const xt::xarray<float> xfs = xt::cast<float>(xs);
  // snippet-begin: tour
  auto x = placeholder("x", {1000});
  auto y = reduce(2.0 * x + roll(x, 1, 0), {0}); // nodes: immutable, shared
  auto out = make_outputs({{"y", y}, {"z", x * x}});
  auto values = evaluate(out, {{"x", xs}}); // the reference interpreter
  auto floats = evaluate(out, basic_tensor_map<float>{{"x", xfs}}); // the same in float

  // Two parts: the reduction in one, the rest in the other.
  auto p = find_partition(out, [&](const node_ptr& n) -> part_id { return n == y ? 1 : 0; });
  auto results = execute_partition(p, {{"x", xs}}, pool); // parts on a thread or process pool
  const auto dot = get_dot_graph(p); // one dashed cluster a part
  auto bytes = troupe::serialize(p); // the same bytes in any process
  // snippet-end: tour
  EXPECT_EQ(p.parts.size(), 2u);
  EXPECT_TRUE(xt::allclose(results.at("y"), values.at("y")));
  EXPECT_TRUE(xt::allclose(results.at("z"), values.at("z")));
  EXPECT_NEAR(floats.at("y")(), values.at("y")(), 1e-2);
  EXPECT_NE(dot.find("cluster"), std::string::npos);
  EXPECT_EQ(troupe::deserialize<graph_partition>(bytes).parts.size(), 2u);
}

// A part that reads a cut of a parameter's shape reads the parameter too.
TEST(graph_size_parameters, partitions_carry_the_parameters_their_parts_read) {
  auto n = size_param("n");
  auto x = placeholder("x", {extent(n)});
  auto y = 2.0 * x;
  auto z = elementwise("exp", {y}) + 1.0;
  const auto out = make_outputs({{"z", z}});
  const auto p = find_partition(out, [&](const node_ptr& node) -> part_id {
    return node == y || node->children().empty() ? 0 : 1;
  });
  ASSERT_EQ(p.parts.size(), 2u);
  EXPECT_TRUE(p.parts.at(1).user_input_names.contains("n"));
  const tensor_map inputs{{"x", xt::xarray<double>{0, 1, 2}}, {"n", xt::xarray<double>(3.0)}};
  EXPECT_TRUE(xt::allclose(execute_partition(p, inputs).at("z"), evaluate(out, inputs).at("z")));
}

// §2c 2.
TEST(graph_analysis, users_of_y_equals_a_plus_1) {
  auto a = placeholder("a", {2});
  auto one = constant(1.0);
  auto y = a + one;
  auto users = get_users(y);
  EXPECT_EQ(users.size(), 3u);
  EXPECT_TRUE(users.at(y).empty());
  EXPECT_EQ(users.at(a).size(), 1u);
  EXPECT_TRUE(users.at(a).contains(y));

  // Two structurally equal copies of a + 1 are one key, their users merged; a node that reads
  // the same child twice is one user of it.
  auto twice = a * a;
  auto first = a + one, second = a + one;
  auto out = make_outputs({{"f", first * 2.0}, {"s", second * 3.0}, {"t", twice}});
  const auto merged = get_users(out);
  EXPECT_EQ(merged.at(first).size(), 2u);
  EXPECT_EQ(merged.at(a).size(), 2u) << "a + 1 (both copies) and a * a";
}

// §2c 3.
TEST(graph_analysis, all_users_in_linear_time) {
  auto x1 = placeholder("x1", {2});
  auto x2 = placeholder("x2", {2});
  auto two_x1 = 2.0 * x1;
  auto seven_x1 = 7.0 * x1;
  auto three_x2 = 3.0 * x2;
  auto sum = seven_x1 + three_x2;
  auto expr = make_outputs({{"out1", two_x1}, {"out2", sum}});
  EXPECT_EQ(rec_get_user_nodes(expr, x1), (node_set{two_x1, seven_x1, sum, expr}));
  EXPECT_EQ(rec_get_user_nodes(expr, x2), (node_set{three_x2, sum, expr}));

  node_ptr y = placeholder("y", {1});
  const auto c1 = constant(1.5), c2 = constant(2.5);
  for (int i = 0; i < 100; ++i)
    y = c1 * y + c2 * y;
  y = deduplicate(y);
  const auto all = topological_order(y);
  const auto input = *std::find_if(
    all.begin(), all.end(), [](const node_ptr& n) { return n->what() == kind::placeholder; });
  const auto users = rec_get_user_nodes(y, input);
  std::size_t computed = 0;
  for (const auto& n : all)
    computed += n->what() != kind::placeholder && n->what() != kind::data;
  EXPECT_EQ(users.size(), computed) << "every computed node uses the placeholder";
}

// §2c 4.
TEST(graph_mappers, copy_mapper_hash_conses_and_detects_created_duplicates) {
  auto sum = placeholder("x", {2}) + placeholder("x", {2});
  copy_mapper copy{false, false};
  auto copied = copy(sum);
  const auto order = topological_order(copied);
  EXPECT_EQ(kinds_of(order), (std::vector<std::string>{"placeholder", "elementwise"}));
  copy_mapper again{false, false};
  auto unchanged = placeholder("y", {2}) * 2.0;
  EXPECT_EQ(again(unchanged), unchanged) << "nothing changed: the same instance";

  struct rebuilder : copy_mapper {
    rebuilder() : copy_mapper(false, true) {}
    node_ptr map_elementwise(const node_ptr& n) override {
      return n->with_children(n->children()); // a new instance, equal, with the same children
    }
  } rebuild;
  EXPECT_THROW(rebuild(placeholder("z", {1}) + 1.0), created_duplicate);
}

TEST(graph_mappers, cached_mapper_reports_collisions_when_asked) {
  struct counter : cached_mapper<int> {
    counter() : cached_mapper(true) {}
    int map_placeholder(const node_ptr&) override { return 1; }
    int map_elementwise(const node_ptr& n) override {
      return rec(n->children()[0]) + rec(n->children()[1]);
    }
  } count;
  EXPECT_THROW(count(placeholder("x", {1}) + placeholder("x", {1})), cache_collision);
  struct plain : mapper<int> {
  } none;
  EXPECT_THROW(none(placeholder("x", {1})), unsupported_node);
}

// §2c 5.
TEST(graph_mappers, cached_walk_mapper_keyed_on_an_extra_argument) {
  struct walker : cached_walk_mapper<int> {
    std::vector<int> seen;
    std::string extra_key(int extra) const override { return std::to_string(extra); }
    void post_visit(const node_ptr&, int extra) override { seen.push_back(extra); }
  } walk;
  auto x = placeholder("x", {1});
  walk(x + x, 42);
  EXPECT_EQ(walk.seen, (std::vector<int>{42, 42})) << "x once, then the sum";
  struct keyless : cached_walk_mapper<int> {
  } no_key;
  EXPECT_THROW(no_key(x, 1), troupe::state_error);
}

// §2c 6.
TEST(graph_analysis, dependencies_and_their_subset) {
  auto x = placeholder("x", {2});
  auto y = placeholder("y", {2});
  auto two = constant(2.0);
  auto two_x = two * x;
  auto expr = two_x + y;
  dependency_mapper deps;
  EXPECT_EQ(deps(expr), (node_set{x, y, two, two_x, expr}));
  subset_dependency_mapper subset{node_set{x}};
  EXPECT_EQ(subset(expr), (node_set{x}));
  input_gatherer inputs;
  EXPECT_EQ(inputs(expr), (node_set{x, y, two}));
}

// §2c 7.
TEST(graph_materialize, collects_inputs_outputs_and_stored_nodes_never_intermediates) {
  auto x = placeholder("x", {2});
  auto y_data = data(xt::xarray<double>{1, 2});
  auto sum = x + y_data;
  auto out = sum * x;
  auto outputs = make_outputs({{"out", out}});
  EXPECT_EQ(collect_materialized_nodes(outputs), (node_set{x, y_data, out}));
  EXPECT_EQ(collect_materialized_nodes(outputs, false), (node_set{x, y_data}));
  auto kept = sum->with_tag(stored_tag);
  auto with_kept = make_outputs({{"out", kept * x}});
  EXPECT_TRUE(collect_materialized_nodes(with_kept, false).contains(kept));
}

// §2c 8.
TEST(graph_materialize, multiple_predecessors_and_successors_are_stored) {
  auto i1 = placeholder("i1", {2});
  auto i2 = placeholder("i2", {2});
  auto t = i1 + i2;
  auto out = make_outputs({{"o1", elementwise("exp", {t})}, {"o2", elementwise("sqrt", {t})}});
  const auto marked = materialize_with_mpms(out);
  node_set stored;
  for (const auto& n : topological_order(marked))
    if (n->tags().contains(stored_tag))
      stored.insert(n);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_TRUE(*stored.begin()->get() == *t->with_tag(stored_tag));
  EXPECT_EQ(evaluate(marked, {{"i1", xt::xarray<double>{1, 2}}, {"i2", xt::xarray<double>{3, 2}}}),
            evaluate(out, {{"i1", xt::xarray<double>{1, 2}}, {"i2", xt::xarray<double>{3, 2}}}));

  auto chain = make_outputs({{"o", elementwise("exp", {elementwise("sqrt", {i1 + i2})})}});
  EXPECT_EQ(materialize_with_mpms(chain), chain) << "single uses: nothing stored, nothing rebuilt";
}

/// A random DAG of `size` computed nodes over 3 inputs; its outputs are the last 3 nodes. Each
/// node uses one of the 8 before it and any other, so the outputs reach nearly all of them.
node_ptr random_dag(unsigned seed, int size) {
  std::mt19937 random{seed};
  std::vector<node_ptr> nodes{placeholder("a", {4}), placeholder("b", {4}), placeholder("c", {4})};
  for (int i = 0; i < size; ++i) {
    std::uniform_int_distribution<std::size_t> pick{0, nodes.size() - 1};
    std::uniform_int_distribution<std::size_t> recent{1, std::min<std::size_t>(8, nodes.size())};
    const auto l = nodes[nodes.size() - recent(random)];
    const auto r = nodes[pick(random)];
    nodes.push_back(random() % 2 ? l + r : l * 0.5 - r);
  }
  std::map<std::string, node_ptr> named;
  for (int i = 0; i < 3; ++i)
    named["out" + std::to_string(i)] = nodes[nodes.size() - 1 - static_cast<std::size_t>(i)];
  return make_outputs(named);
}

tensor_map random_inputs() {
  return {{"a", xt::xarray<double>{1, 2, 3, 4}},
          {"b", xt::xarray<double>{-1, 0.5, 2, 0}},
          {"c", xt::xarray<double>{3, 3, 1, 2}}};
}

/// Part = position in the topological order / 3.
std::function<part_id(const node_ptr&)> by_thirds(const node_ptr& outputs) {
  auto position = std::make_shared<std::unordered_map<const node*, part_id>>();
  part_id i = 0;
  for (const auto& n : topological_order(outputs))
    (*position)[n.get()] = i++ / 3;
  return [position](const node_ptr& n) { return position->at(n.get()); };
}

// §2c 9.
TEST(graph_partition, random_dags_partition_and_evaluate_alike) {
  int cycles = 0;
  for (unsigned seed = 0; seed < 50; ++seed) {
    const auto dag = random_dag(seed, 30);
    const auto expected = evaluate(dag, random_inputs());
    try {
      const auto p = find_partition(dag, by_thirds(dag));
      auto got = execute_partition(p, random_inputs());
      for (const auto& [name, value] : expected)
        EXPECT_TRUE(xt::allclose(got.at(name), value)) << "seed " << seed << " " << name;
    } catch (const partition_induced_cycle&) {
      ++cycles;
    }
  }
  EXPECT_LT(cycles, 50 / 3);
}

// §2c 10.
TEST(graph_partition, a_part_between_the_ends_of_an_edge_is_a_cycle) {
  auto a = placeholder("x", {1}) + 1.0;
  auto b = a * 2.0;
  auto c = b + a;
  auto out = make_outputs({{"c", c}});
  auto part = [&](const node_ptr& n) -> part_id { return n == b ? 2 : 1; };
  EXPECT_THROW(find_partition(out, part), partition_induced_cycle);
}

// §2c 11.
TEST(graph_partition, a_child_used_from_two_parts_gets_one_cut_placeholder) {
  auto x = placeholder("x", {2});
  auto shared = x * 3.0;
  auto left = shared + 1.0;
  auto right = shared * 2.0;
  auto out = make_outputs({{"left", left}, {"right", right}});
  auto part = [&](const node_ptr& n) -> part_id {
    if (n == left)
      return 1;
    if (n == right)
      return 2;
    return 0;
  };
  const auto p = find_partition(out, part);
  ASSERT_EQ(p.parts.size(), 3u);
  EXPECT_EQ(p.parts.at(0).output_names, (std::set<std::string>{"_pt_part_ph_0"}));
  EXPECT_EQ(p.parts.at(0).user_input_names, (std::set<std::string>{"x"}));
  for (part_id consumer : {1, 2}) {
    EXPECT_EQ(p.parts.at(consumer).partition_input_names, (std::set<std::string>{"_pt_part_ph_0"}));
    EXPECT_EQ(p.parts.at(consumer).needed_pids, (std::set<part_id>{0}));
  }
  EXPECT_EQ(p.toposorted_part_ids, (std::vector<part_id>{0, 1, 2}));
  auto values = execute_partition(p, {{"x", xt::xarray<double>{1, 2}}});
  EXPECT_EQ(values.at("left"), (xt::xarray<double>{4, 7}));
  EXPECT_EQ(values.at("right"), (xt::xarray<double>{6, 12}));
}

// A user's input named like a cut placeholder was fed the cut's array ({6, 12} where the
// reference gives {103, 206}): the prefix is troupe's own, as pytato's is.
TEST(graph_names, a_placeholder_may_not_take_a_reserved_name) {
  try {
    (void)placeholder("_pt_part_ph_0", {2});
    FAIL() << "a reserved name was taken";
  } catch (const name_clash_error& e) {
    EXPECT_NE(std::string{e.what()}.find("'_pt_part_ph_0'"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)placeholder("_pt_dist_3", {2}), name_clash_error);
  EXPECT_NO_THROW((void)placeholder("pt_part_ph_0", {2})) << "only the prefix is reserved";
}

TEST(graph_names, one_name_for_two_different_inputs_is_refused_naming_both) {
  auto a = placeholder("x", {2});
  auto b = placeholder("x", {2}, dtype::float32);
  auto out = make_outputs({{"sum", a + b}});
  for (const auto& attempt : std::vector<std::function<void()>>{
         [&] { (void)find_partition(out, [](const node_ptr&) -> part_id { return 0; }); },
         [&] {
           (void)evaluate(out, {{"x", xt::xarray<double>{1, 2}}});
         }}) {
    try {
      attempt();
      FAIL() << "two inputs of one name were accepted";
    } catch (const name_clash_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("'x'"), std::string::npos) << what;
      EXPECT_NE(what.find("float64 (2)"), std::string::npos) << what;
      EXPECT_NE(what.find("float32 (2)"), std::string::npos) << what;
    }
  }
  // The same input twice (equal name, shape and dtype) is one input.
  auto twice = make_outputs({{"sum", placeholder("y", {2}) + placeholder("y", {2})}});
  EXPECT_EQ(evaluate(twice, {{"y", xt::xarray<double>{1, 2}}}).at("sum"),
            (xt::xarray<double>{2, 4}));
}

TEST(graph_nodes, reshape_takes_one_minus_one_for_the_rest) {
  auto x = placeholder("x", {2, 3});
  EXPECT_EQ(reshape(x, {-1})->shape(), (shape_t{6}));
  EXPECT_EQ(reshape(x, {3, -1})->shape(), (shape_t{3, 2}));
  auto out = make_outputs({{"r", reshape(x, {-1, 2})}});
  const xt::xarray<double> values{{1, 2, 3}, {4, 5, 6}};
  EXPECT_EQ(evaluate(out, {{"x", values}}).at("r"), (xt::xarray<double>{{1, 2}, {3, 4}, {5, 6}}));
  EXPECT_THROW((void)reshape(x, {-1, -1}), troupe::invalid_argument);
  EXPECT_THROW((void)reshape(x, {4, -1}), troupe::invalid_argument);
}

// pytato's helpers, by their documented behaviour, on p = (a + b) * (a + b), the two sums
// equal but distinct instances.
TEST(graph_analysis, pytato_helpers_count_tag_gather_copy_and_draw) {
  auto a = placeholder("a", {2});
  auto b = placeholder("b", {2});
  auto s1 = a + b, s2 = a + b;
  auto p = s1 * s2;
  auto out = make_outputs({{"p", p}});
  EXPECT_EQ(get_num_nodes(out), 4u) << "a, b, the sum once, the product";
  EXPECT_EQ(get_num_nodes(out, true), 5u) << "each instance of the sum";

  const auto nusers = get_nusers(out);
  EXPECT_EQ(nusers.at(a), 2u) << "read by both sums";
  EXPECT_EQ(nusers.at(s1), 2u) << "the product reads each sum once; the two are equal";
  EXPECT_EQ(nusers.at(p), 1u);
  EXPECT_EQ(nusers.at(out), 0u);

  const auto tags = tag_user_nodes(get_users(out), "from_a", a);
  for (const auto& n : {a, s1, p, out})
    EXPECT_TRUE(tags.at(n).contains("from_a"));
  EXPECT_FALSE(tags.contains(b)) << "b does not use a";
  const auto more = tag_user_nodes(get_users(out), "from_b", b, tags);
  EXPECT_EQ(more.at(p), (std::set<std::string>{"from_a", "from_b"}));

  auto n = size_param("n");
  auto sized = make_outputs({{"q", placeholder("q", {extent(n), 3}) * 2.0}});
  size_param_gatherer gather;
  const auto found = gather(sized);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ((*found.begin())->name(), "n");

  std::size_t calls = 0;
  auto renamed = map_and_copy(out, [&](const node_ptr& x) {
    ++calls;
    return x->what() == kind::placeholder && x->name() == "a" ? placeholder("c", x->shape()) : x;
  });
  input_gatherer inputs;
  std::set<std::string> names;
  for (const auto& i : inputs(renamed))
    names.insert(i->name());
  EXPECT_EQ(names, (std::set<std::string>{"b", "c"}));
  EXPECT_EQ(calls, 5u) << "each distinct node once: outputs, product, sum, a, b";
  EXPECT_EQ(
    evaluate(renamed, {{"b", xt::xarray<double>{1, 2}}, {"c", xt::xarray<double>{3, 4}}}).at("p"),
    (xt::xarray<double>{16, 36}));

  const auto text = get_ascii_graph(out);
  EXPECT_NE(text.find("#0 placeholder a (2)\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" <- #0, #1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("outputs [p] <- #"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 6) << "5 instances and the outputs";
}

/// Scales each placeholder by a factor passed down from the root.
class scaling_copy : public copy_mapper_with_extra_args<double> {
protected:
  node_ptr map_placeholder(const node_ptr& n, double factor) override { return n * factor; }
  std::string extra_key(double factor) const override { return std::to_string(factor); }
};

/// Counts the edges it is asked about, by the kinds at their ends.
class edge_counter : public edge_cached_mapper {
public:
  std::map<std::pair<std::string, std::string>, int> edges;

protected:
  node_ptr handle_edge(const node_ptr& parent, const node_ptr& child) override {
    ++edges[{kind_name(parent->what()), kind_name(child->what())}];
    return rec(child);
  }
};

TEST(graph_mappers, extra_arguments_go_down_and_edges_are_handled_once_each) {
  auto a = placeholder("a", {2});
  auto out = make_outputs({{"y", a + a}});
  const auto scaled = scaling_copy{}(out, 3.0);
  EXPECT_EQ(evaluate(scaled, {{"a", xt::xarray<double>{1, 2}}}).at("y"),
            (xt::xarray<double>{6, 12}));
  // (a + a): the sum node is reached once, but its two edges to `a` are each handled.
  edge_counter counter;
  (void)counter(out);
  EXPECT_EQ((counter.edges[{"elementwise", "placeholder"}]), 2);
  EXPECT_EQ((counter.edges[{"outputs", "elementwise"}]), 1) << "the outputs node's edge to the sum";
}

// numpy's basic indexing: integers (negative from the end), slices with steps either way, new
// axes; in shapes, the evaluator, a partition, serialization and the pictures.
TEST(graph_indexing, basic_indices_as_numpy_takes_them) {
  auto x = placeholder("x", {4, 5});
  EXPECT_EQ(index(x, {index_at(1)})->shape(), (shape_t{5}));
  EXPECT_EQ(index(x, {index_at(-1), index_slice(1, {}, 2)})->shape(), (shape_t{2}));
  EXPECT_EQ(index(x, {index_slice({}, {}, -1)})->shape(), (shape_t{4, 5}));
  EXPECT_EQ(index(x, {index_newaxis(), index_slice(1, 3)})->shape(), (shape_t{1, 2, 5}));
  EXPECT_EQ(index(x, {index_slice(10, 20)})->shape(), (shape_t{0, 5})) << "clamped, as numpy";
  EXPECT_THROW((void)index(x, {index_at(4)}), troupe::invalid_argument);
  EXPECT_THROW((void)index(x, {index_at(-5)}), troupe::invalid_argument);
  EXPECT_THROW((void)index(x, {index_slice(0, 2, 0)}), troupe::invalid_argument);
  EXPECT_THROW((void)index(x, {index_at(0), index_at(0), index_at(0)}), troupe::invalid_argument);

  const xt::xarray<double> v = xt::reshape_view(xt::arange<double>(20), {4, 5});
  auto out = make_outputs({{"a", index(x, {index_at(-1), index_slice(1, {}, 2)})},
                           {"b", index(x, {index_slice({}, {}, -1), index_at(0)})},
                           {"c", index(x, {index_newaxis(), index_slice(1, 3)})},
                           {"d", index(x, {index_slice({}, {}, 1), index_slice(-2, {})}) * 2.0},
                           {"e", index(x, {index_slice(3, 0, -2), index_slice(4, {}, -3)})}});
  const auto values = evaluate(out, {{"x", v}});
  EXPECT_EQ(values.at("a"), (xt::xarray<double>{16, 18}));
  EXPECT_EQ(values.at("b"), (xt::xarray<double>{15, 10, 5, 0}));
  EXPECT_EQ(values.at("c"), (xt::xarray<double>{{{5, 6, 7, 8, 9}, {10, 11, 12, 13, 14}}}));
  EXPECT_EQ(values.at("d"), (xt::xarray<double>{{6, 8}, {16, 18}, {26, 28}, {36, 38}}));
  EXPECT_EQ(values.at("e"), (xt::xarray<double>{{19, 16}, {9, 6}})) << "x[3:0:-2, 4::-3]";

  // Cut between the indexing and its operand: the parts compute what the whole does.
  auto doubled = x * 2.0;
  auto picked = index(doubled, {index_slice(1, 3), index_at(-1)});
  auto cut = make_outputs({{"p", picked}});
  const auto p = find_partition(cut, [&](const node_ptr& n) -> part_id { return n == picked; });
  ASSERT_EQ(p.parts.size(), 2u);
  EXPECT_EQ(execute_partition(p, {{"x", v}}).at("p"), (xt::xarray<double>{18, 28}));

  const auto back = troupe::deserialize<node_ptr>(troupe::serialize(out));
  EXPECT_TRUE(*back == *out);
  EXPECT_EQ(evaluate(back, {{"x", v}}).at("e"), values.at("e"));
  EXPECT_NE(get_ascii_graph(out).find("index (2)"), std::string::npos);
  EXPECT_NE(get_dot_graph(out).find("index"), std::string::npos);
}

// numpy's advanced indexing: index arrays (whole numbers, negative from the end) broadcast
// together; their shape stands where they stand together, else first.
TEST(graph_indexing, index_arrays_as_numpy_takes_them) {
  auto x = placeholder("x", {4, 5});
  const xt::xarray<double> v = xt::reshape_view(xt::arange<double>(20), {4, 5});
  auto rows = data(xt::xarray<double>{0, 2});
  auto cols = placeholder("cols", {3}); // index values known only when evaluated
  auto pairs_r = data(xt::xarray<double>{0, 1});
  auto pairs_c = data(xt::xarray<double>{1, 2});
  const xt::xarray<double> column_values = xt::reshape_view(xt::xarray<double>{0.0, 3.0}, {2, 1});
  auto column = data(column_values); // [[0], [3]]
  auto x3 = placeholder("x3", {2, 3, 4});
  const xt::xarray<double> v3 = xt::reshape_view(xt::arange<double>(24), {2, 3, 4});
  auto out = make_outputs(
    {{"rows", index(x, {index_array(rows)})},
     {"cols", index(x, {index_slice(), index_array(cols)})},
     {"pairs", index(x, {index_array(pairs_r), index_array(pairs_c)})},
     {"grid", index(x, {index_array(column), index_array(pairs_c)})},
     {"apart", index(x3, {index_array(pairs_r), index_slice(), index_at(0)})},
     {"together",
      index(x3, {index_slice(), index_array(data(xt::xarray<double>{0, 2})), index_at(0)})}});
  EXPECT_EQ(out->children()[0]->shape(), (shape_t{2, 3})) << "apart: the arrays' shape first";
  EXPECT_EQ(out->children()[5]->shape(), (shape_t{2, 2})) << "together: where they stand";
  const tensor_map inputs{{"x", v}, {"x3", v3}, {"cols", xt::xarray<double>{4, -1, 0}}};
  const auto values = evaluate(out, inputs);
  EXPECT_EQ(values.at("rows"), (xt::xarray<double>{{0, 1, 2, 3, 4}, {10, 11, 12, 13, 14}}));
  EXPECT_EQ(values.at("cols"),
            (xt::xarray<double>{{4, 4, 0}, {9, 9, 5}, {14, 14, 10}, {19, 19, 15}}));
  EXPECT_EQ(values.at("pairs"), (xt::xarray<double>{1, 7}));
  EXPECT_EQ(values.at("grid"), (xt::xarray<double>{{1, 2}, {16, 17}}));
  EXPECT_EQ(values.at("apart"), (xt::xarray<double>{{0, 4, 8}, {12, 16, 20}}))
    << "x3[[0, 1], :, 0]";
  EXPECT_EQ(values.at("together"), (xt::xarray<double>{{0, 8}, {12, 20}})) << "x3[:, [0, 2], 0]";

  EXPECT_THROW((void)index(x, {index_array(data(xt::xarray<double>{0, 1})),
                               index_array(data(xt::xarray<double>{0, 1, 2}))}),
               troupe::invalid_argument)
    << "index arrays that do not broadcast";
  for (const auto bad : {1.5, 5.0, -6.0}) {
    auto one = make_outputs({{"y", index(x, {index_array(cols)})}});
    EXPECT_THROW((void)evaluate(one, {{"x", v}, {"cols", xt::xarray<double>{0, bad, 1}}}),
                 troupe::invalid_argument)
      << bad;
  }

  const auto back = troupe::deserialize<node_ptr>(troupe::serialize(out));
  EXPECT_TRUE(*back == *out);
  EXPECT_EQ(evaluate(back, inputs).at("grid"), values.at("grid"));
  // The index array made in another part.
  auto made = cols + 0.0;
  auto picked = index(x, {index_slice(), index_array(made)});
  auto cut = make_outputs({{"p", picked}});
  const auto p = find_partition(cut, [&](const node_ptr& n) -> part_id { return n == made; });
  EXPECT_EQ(execute_partition(p, inputs).at("p"), values.at("cols"));
}

TEST(graph_partition, the_same_dag_gives_the_same_partition) {
  const auto first = random_dag(7, 40); // built twice, apart
  const auto one = find_partition(first, by_thirds(first));
  const auto dag = random_dag(7, 40);
  const auto two = find_partition(dag, by_thirds(dag));
  EXPECT_EQ(one.toposorted_part_ids, two.toposorted_part_ids);
  ASSERT_EQ(one.var_name_to_result.size(), two.var_name_to_result.size());
  for (const auto& [name, n] : one.var_name_to_result)
    EXPECT_TRUE(*n == *two.var_name_to_result.at(name)) << name;
}

TEST(graph_partition, parts_run_on_a_pool_as_soon_as_their_inputs_are_there) {
  troupe::runtime rt;
  troupe::thread_pool pool{rt, {.workers = 2}};
  for (unsigned seed = 0; seed < 10; ++seed) {
    const auto dag = random_dag(seed, 30);
    try {
      const auto p = find_partition(dag, by_thirds(dag));
      const auto here = execute_partition(p, random_inputs());
      const auto there = execute_partition(p, random_inputs(), pool);
      for (const auto& [name, value] : here)
        EXPECT_TRUE(xt::allclose(there.at(name), value)) << name;
    } catch (const partition_induced_cycle&) {
    }
  }
  // A part that throws: its error comes back, once the others running are done.
  auto x = placeholder("x", {2});
  auto out = make_outputs({{"a", x + 1.0}, {"b", x * 2.0}});
  auto parts = find_partition(out, [](const node_ptr& n) -> part_id { return n->name() == "add"; });
  EXPECT_THROW(execute_partition(parts, {}, pool), troupe::invalid_argument) << "no input x";
}

/// `count` parts, part i computing "o<i>" from x, or from part i - 1 when `chained`.
graph_partition parts_of(int count, bool chained) {
  auto x = placeholder("x", {3});
  std::map<std::string, node_ptr> named;
  std::unordered_map<const node*, part_id> part;
  node_ptr last = x;
  for (int i = 0; i < count; ++i) {
    auto y = (chained ? last : x) * (2.0 + i);
    part.emplace(y.get(), i);
    named["o" + std::to_string(i)] = last = y;
  }
  return find_partition(make_outputs(named), [&](const node_ptr& n) { return part.at(n.get()); });
}

/// Tasks the pool ran, counted once its workers have stopped.
std::size_t tasks_run(troupe::thread_pool& pool) {
  pool.close();
  pool.join();
  std::size_t tasks = 0;
  for (const auto& w : pool.stats())
    tasks += w.tasks;
  return tasks;
}

TEST(graph_partition, a_pool_runs_parts_in_one_task_per_worker_not_one_per_part) {
  troupe::runtime rt;
  const tensor_map inputs{{"x", xt::xarray<double>{1, 2, 3}}};
  troupe::thread_pool for_chain{rt, {.workers = 2}};
  const auto chain = execute_partition(parts_of(6, true), inputs, for_chain);
  EXPECT_TRUE(xt::allclose(chain.at("o5"), xt::xarray<double>{5040, 10080, 15120}));
  EXPECT_EQ(tasks_run(for_chain), 1u) << "a chain of parts runs on one worker, part after part";
  troupe::thread_pool for_independent{rt, {.workers = 2}};
  const auto independent = execute_partition(parts_of(16, false), inputs, for_independent);
  EXPECT_TRUE(xt::allclose(independent.at("o15"), xt::xarray<double>{17, 34, 51}));
  EXPECT_EQ(tasks_run(for_independent), 2u) << "16 independent parts: one task per worker";
}

TEST(graph_partition, a_pools_own_task_may_run_a_partition_on_that_pool) {
  troupe::runtime rt;
  const tensor_map inputs{{"x", xt::xarray<double>{1, 2, 3}}};
  const auto partition = parts_of(8, false);
  const xt::xarray<double> o7{9, 18, 27};
  // One worker: the parts' loop would queue behind the very task that waits for it.
  troupe::thread_pool one{rt, {.workers = 1}};
  auto alone = one.apply_async([&] { return execute_partition(partition, inputs, one).at("o7"); });
  EXPECT_TRUE(xt::allclose(alone.get(std::chrono::seconds{10}), o7));
  // Two workers, both in such a task at once: the loop each launches queues behind the other.
  troupe::thread_pool two{rt, {.workers = 2}};
  std::atomic<int> arrived{0};
  std::promise<void> both;
  const auto both_arrived = both.get_future().share();
  const auto meet_then_run = [&] {
    if (++arrived == 2)
      both.set_value();
    both_arrived.wait_for(std::chrono::seconds{10});
    return execute_partition(partition, inputs, two).at("o7");
  };
  auto first = two.apply_async(meet_then_run);
  auto second = two.apply_async(meet_then_run);
  EXPECT_TRUE(xt::allclose(first.get(std::chrono::seconds{10}), o7));
  EXPECT_TRUE(xt::allclose(second.get(std::chrono::seconds{10}), o7));
  EXPECT_EQ(arrived.load(), 2);
}

TEST(graph_partition, a_pool_terminated_under_a_partition_fails_it_rather_than_hang) {
  troupe::runtime rt;
  troupe::thread_pool pool{rt, {.workers = 1}};
  std::promise<void> release;
  // The worker holds two tasks at a time: one waiting at the gate and one more, so the
  // partition's loop waits in the pool's backlog, which terminate() empties before the gate
  // opens (the pool's messages are handled in order).
  auto occupied = pool.apply_async([gate = release.get_future().share()] { gate.wait(); });
  auto queued = pool.apply_async([] {});
  auto run = std::async(std::launch::async, [&] {
    return execute_partition(parts_of(2, false), {{"x", xt::xarray<double>{1, 2, 3}}}, pool);
  });
  // Should the partition come after terminate(), it finds the pool closed: the same outcome.
  std::this_thread::sleep_for(std::chrono::milliseconds{50});
  pool.terminate();
  release.set_value();
  ASSERT_EQ(run.wait_for(std::chrono::seconds{10}), std::future_status::ready);
  EXPECT_THROW(run.get(), troupe::pool_closed);
  queued.wait();
  occupied.wait();
}

TEST(graph_partition, a_random_dag_of_a_hundred_thousand_nodes_partitions_and_runs) {
  const auto dag = random_dag(1, 100'000);
  auto position = std::make_shared<std::unordered_map<const node*, part_id>>();
  part_id i = 0;
  for (const auto& n : topological_order(dag))
    (*position)[n.get()] = i++ / 1000;
  const auto p = find_partition(dag, [&](const node_ptr& n) { return position->at(n.get()); });
  EXPECT_GE(p.parts.size(), 100u);
  const auto expected = evaluate(dag, random_inputs());
  const auto got = execute_partition(p, random_inputs());
  for (const auto& [name, value] : expected)
    EXPECT_TRUE(xt::allclose(got.at(name), value, 1e-9, 1e-12)) << name;
}

TEST(graph_nodes, a_chain_of_a_million_nodes_is_destroyed_without_deep_recursion) {
  node_ptr y = placeholder("y", {1});
  const auto one = constant(1.0);
  y = y + one;
  const std::weak_ptr<const node> first = y;
  for (int i = 1; i < 1'000'000; ++i)
    y = y + one;
  y.reset(); // a recursive destructor would overflow the stack here
  EXPECT_TRUE(first.expired()) << "the whole chain is gone";
}

TEST(graph_evaluate, a_chain_of_a_hundred_thousand_nodes_needs_no_deep_stack) {
  node_ptr y = placeholder("y", {2});
  for (int i = 0; i < 100'000; ++i)
    y = y + 1.0;
  EXPECT_EQ(evaluate(make_outputs({{"y", y}}), {{"y", xt::xarray<double>{0, 1}}}).at("y"),
            (xt::xarray<double>{100'000, 100'001}));
}

} // namespace
} // namespace troupe::graph
