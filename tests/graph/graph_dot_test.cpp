// graph/: Graphviz output (§2c 24). Graphviz is not installed here, so the test checks the
// syntax itself: balanced braces, statements ended, every edge between declared nodes.
#include "troupe/graph/dot.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

namespace troupe::graph {
namespace {

/// Problems with `dot` as DOT text; empty when it holds.
std::vector<std::string> dot_problems(const std::string& dot) {
  std::vector<std::string> problems;
  if (dot.rfind("digraph ", 0) != 0)
    problems.emplace_back("does not start with 'digraph '");
  int depth = 0;
  std::set<std::string> declared;
  std::vector<std::pair<std::string, std::string>> edges;
  const std::regex node_line{R"(^\s*("[^"]*"|\w+) \[.*\];$)"};
  const std::regex edge_line{R"(^\s*("[^"]*"|\w+) -> ("[^"]*"|\w+)( \[.*\])?;$)"};
  std::istringstream lines{dot};
  for (std::string line; std::getline(lines, line);) {
    depth += static_cast<int>(std::count(line.begin(), line.end(), '{')) -
             static_cast<int>(std::count(line.begin(), line.end(), '}'));
    std::smatch m;
    if (std::regex_match(line, m, edge_line))
      edges.emplace_back(m[1], m[2]);
    else if (std::regex_match(line, m, node_line))
      declared.insert(m[1]);
    else if (line.find('{') == std::string::npos && line.find('}') == std::string::npos &&
             line.back() != ';')
      problems.push_back("unended statement: " + line);
    if (depth < 0)
      problems.emplace_back("a '}' without its '{'");
  }
  if (depth != 0)
    problems.emplace_back("unbalanced braces");
  for (const auto& [from, to] : edges)
    for (const auto& end : {from, to})
      if (!declared.contains(end))
        problems.push_back("edge end " + end + " is not declared");
  return problems;
}

TEST(graph_dot, a_dag_is_valid_dot_with_inputs_once) {
  auto x = placeholder("x", {3});
  auto out = make_outputs({{"a", 2.0 * x + x}, {"b", reduce(x, {0})}});
  const auto dot = get_dot_graph(out);
  EXPECT_TRUE(dot_problems(dot).empty()) << dot;
  EXPECT_EQ(std::count(dot.begin(), dot.end(), '\n') > 5, true);
  const auto shown = [&](const std::string& text) {
    std::size_t count = 0;
    for (auto at = dot.find(text); at != std::string::npos; at = dot.find(text, at + 1))
      ++count;
    return count;
  };
  EXPECT_EQ(shown("placeholder x"), 1u);
  const auto sized =
    get_dot_graph(make_outputs({{"s", placeholder("s", {extent(size_param("n"))})}}));
  EXPECT_TRUE(dot_problems(sized).empty()) << sized;
  EXPECT_NE(sized.find("placeholder s (n)"), std::string::npos) << sized;
  EXPECT_NE(sized.find("size_param n"), std::string::npos) << sized;
  EXPECT_EQ(shown("elementwise mul"), 1u);
}

TEST(graph_dot, a_two_part_partition_has_two_dashed_clusters) {
  auto x = placeholder("x", {2});
  auto y = x * 3.0;
  auto z = y + 1.0;
  auto out = make_outputs({{"z", z}});
  const auto p = find_partition(out, [&](const node_ptr& n) -> part_id { return n == z ? 1 : 0; });
  const auto dot = get_dot_graph(p);
  const auto problems = dot_problems(dot);
  EXPECT_TRUE(problems.empty()) << problems.front() << "\n" << dot;
  for (const char* cluster :
       {"subgraph cluster_0 {\n    style=dashed;", "subgraph cluster_1 {\n    style=dashed;"})
    EXPECT_NE(dot.find(cluster), std::string::npos) << dot;
  EXPECT_NE(dot.find("[style=dashed]"), std::string::npos) << "the cut is drawn";
}

} // namespace
} // namespace troupe::graph
