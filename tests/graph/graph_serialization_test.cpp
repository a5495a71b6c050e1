// graph/: DAGs and partitions through troupe::serialize (§2c 20: the same bytes in every process).
#include "troupe/graph/analysis.hpp"
#include "troupe/graph/serialization.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <random>

namespace troupe::graph {
namespace {

/// A stencil-like DAG: every point of a row from three of the row before.
node_ptr stencil(int rows, int width) {
  std::vector<node_ptr> row;
  for (int i = 0; i < width; ++i)
    row.push_back(placeholder("u" + std::to_string(i), {4}));
  for (int r = 0; r < rows; ++r) {
    std::vector<node_ptr> next;
    for (int i = 0; i < width; ++i)
      next.push_back(0.25 * row[(i + width - 1) % width] + 0.5 * row[i] +
                     0.25 * row[(i + 1) % width]);
    row = std::move(next);
  }
  std::map<std::string, node_ptr> named;
  for (int i = 0; i < width; ++i)
    named["v" + std::to_string(i)] = row[static_cast<std::size_t>(i)];
  return make_outputs(named);
}

std::function<part_id(const node_ptr&)> by_position(const node_ptr& dag, part_id block) {
  auto position = std::make_shared<std::unordered_map<const node*, part_id>>();
  part_id i = 0;
  for (const auto& n : topological_order(dag))
    (*position)[n.get()] = i++ / block;
  return [position](const node_ptr& n) { return position->at(n.get()); };
}

TEST(graph_serialization, a_dag_round_trips_with_its_sharing) {
  const auto dag = stencil(6, 5);
  const auto back = troupe::deserialize<node_ptr>(troupe::serialize(dag));
  EXPECT_TRUE(*back == *dag);
  EXPECT_EQ(topological_order(back).size(), topological_order(dag).size()) << "shared once";
  auto tagged = (placeholder("x", {2}) * 3.0)->with_tag("stored");
  EXPECT_TRUE(*troupe::deserialize<node_ptr>(troupe::serialize(tagged)) == *tagged);
  auto sized = placeholder("a", {extent(size_param("n")), 2}) * 2.0;
  const auto sized_back = troupe::deserialize<node_ptr>(troupe::serialize(sized));
  EXPECT_TRUE(*sized_back == *sized) << "a size parameter's shape, and the parameter";
  EXPECT_EQ(sized_back->children()[0]->children().at(0)->name(), "n");
}

TEST(graph_serialization, a_partition_round_trips_and_runs_alike) {
  const auto dag = stencil(6, 5);
  const auto p = find_partition(dag, by_position(dag, 7));
  const auto back = troupe::deserialize<graph_partition>(troupe::serialize(p));
  EXPECT_EQ(back.toposorted_part_ids, p.toposorted_part_ids);
  ASSERT_EQ(back.parts.size(), p.parts.size());
  for (const auto& [pid, part] : p.parts) {
    EXPECT_EQ(back.parts.at(pid).output_names, part.output_names);
    EXPECT_EQ(back.parts.at(pid).needed_pids, part.needed_pids);
  }
  tensor_map inputs;
  for (int i = 0; i < 5; ++i)
    inputs["u" + std::to_string(i)] = xt::xarray<double>{1.0 * i, 2.0, 3.0, 4.0};
  const auto want = execute_partition(p, inputs);
  const auto got = execute_partition(back, inputs);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(got.at("v" + std::to_string(i)), want.at("v" + std::to_string(i)));
}

/// The partition's bytes, made in a child process whose heap is first shuffled, so that its
/// nodes land at other addresses than in any other run.
std::vector<std::byte> bytes_from_another_process(unsigned seed) {
  int fds[2];
  if (::pipe(fds) != 0)
    throw std::runtime_error("pipe");
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    std::mt19937 random{seed};
    std::vector<std::unique_ptr<char[]>> junk;
    for (int i = 0; i < 1000; ++i)
      junk.emplace_back(new char[16 + random() % 4096]);
    const auto dag = stencil(8, 6);
    const auto bytes = troupe::serialize(find_partition(dag, by_position(dag, 9)));
    std::size_t written = 0;
    while (written < bytes.size()) {
      const auto n = ::write(fds[1], bytes.data() + written, bytes.size() - written);
      if (n <= 0)
        ::_exit(2);
      written += static_cast<std::size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::vector<std::byte> bytes;
  std::byte buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;)
    bytes.insert(bytes.end(), buffer, buffer + n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return bytes;
}

// §2c 20.
TEST(graph_serialization, four_processes_give_byte_identical_partitions) {
  const auto first = bytes_from_another_process(1);
  ASSERT_FALSE(first.empty());
  for (unsigned seed : {2u, 3u, 4u})
    EXPECT_EQ(bytes_from_another_process(seed), first) << "seed " << seed;
}

TEST(graph_serialization, bytes_that_do_not_hold_are_a_serialization_error) {
  std::vector<node_record> table(2);
  table[0] = {kind::placeholder, "x", {}, {2}, dtype::float64, {}, {}, {}, {}};
  table[1] = {kind::elementwise, "add", {0, 1}, {2}, dtype::float64, {}, {}, {}, {}};
  EXPECT_THROW(rebuild(table), troupe::serialization_error) << "a child not before its user";
  table[1] = {kind::elementwise, "add", {0}, {2}, dtype::float64, {}, {}, {}, {}};
  EXPECT_THROW(rebuild(table), troupe::serialization_error) << "add of one operand";
  table[1] = {kind::data, "", {}, {3}, dtype::float64, {}, {}, {1.0}, {}};
  EXPECT_THROW(rebuild(table), troupe::serialization_error) << "1 value for 3";
  // Index entries read back must fit their array: a forged count would size the result.
  table[1] = {kind::index, "", {0}, {}, dtype::float64, {2, 0, 0, 1'000'000'000'000}, {}, {}, {}};
  EXPECT_THROW(rebuild(table), troupe::serialization_error) << "a new axis of 10^12";
  table[1] = {kind::index, "", {0}, {}, dtype::float64, {1, 0, 0, 1'000'000'000}, {}, {}, {}};
  EXPECT_THROW(rebuild(table), troupe::serialization_error) << "10^9 steps of 0";
  table[1] = {kind::index, "", {0}, {}, dtype::float64, {1, 1, -1, 2}, {}, {}, {}};
  EXPECT_EQ(rebuild(table).back()->shape(), (shape_t{2})) << "x[1::-1] holds";
  auto bytes = troupe::serialize(stencil(2, 3));
  bytes.resize(bytes.size() / 2);
  EXPECT_THROW(troupe::deserialize<node_ptr>(bytes), troupe::serialization_error);
}

} // namespace
} // namespace troupe::graph
