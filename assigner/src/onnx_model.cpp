#include "troupe/assigner/onnx_model.hpp"

#include "onnx/onnx_flops.hpp"
#include "onnx/onnx_reader.hpp"
#include "onnx/onnx_shape_rules.hpp"
#include "onnx/onnx_shapes.hpp"

#include "troupe/actors/error.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace troupe {

namespace {

using detail::shape_table;

/// The scope of an operator: its name's components but the last (the operator's own), split at
/// '/' and '.': "/enc/layers.3/self_attn/MatMul" is in enc, layers, 3, self_attn.
std::vector<std::string> scope_of(const std::string& name) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : name + "/")
    if (c == '/' || c == '.') {
      if (!part.empty())
        parts.push_back(std::move(part));
      part.clear();
    } else {
      part += c;
    }
  if (!parts.empty())
    parts.pop_back();
  return parts;
}

/// Whether `a` and `b` are blocks of one repeated kind: the same but for a last component that
/// is a number in each ("enc.layers.0" and "enc.layers.1").
bool repeat_each_other(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const auto number = [](const std::string& part) {
    return !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
  };
  return a.size() == b.size() && !a.empty() && a.back() != b.back() && number(a.back()) &&
         number(b.back()) && std::equal(a.begin(), a.end() - 1, b.begin());
}

/// A scope's components joined as a module's name ("enc.layers.3").
std::string module_name(const std::vector<std::string>& parts) {
  std::string name;
  for (const auto& part : parts)
    name += (name.empty() ? "" : ".") + part;
  return name;
}

/// The depth modules group at when none is given, and the two repeated blocks it was picked by.
struct picked_depth {
  std::size_t depth = 1;
  std::vector<std::string> blocks;
};

/// The smallest depth at which two operators' scopes are repeated blocks (PyTorch's
/// "/enc/layers.3/self_attn/MatMul" and "/enc/layers.4/...": 3), or 1 if there is none.
picked_depth repeated_block_depth(const onnx::GraphProto& g) {
  std::set<std::vector<std::string>> scopes;
  std::size_t deepest = 0;
  for (const auto& node : g.node()) {
    auto scope = scope_of(node.name());
    deepest = std::max(deepest, scope.size());
    scopes.insert(std::move(scope));
  }
  for (std::size_t depth = 1; depth <= deepest; ++depth) {
    std::set<std::vector<std::string>> prefixes;
    for (const auto& scope : scopes)
      if (scope.size() >= depth)
        prefixes.emplace(scope.begin(), scope.begin() + static_cast<std::ptrdiff_t>(depth));
    for (auto at = prefixes.begin(); at != prefixes.end(); ++at)
      if (const auto next = std::next(at); next != prefixes.end() && repeat_each_other(*at, *next))
        return {depth, {module_name(*at), module_name(*next)}};
  }
  return {};
}

/// Operators into modules, by index, and the modules' names in order of first operator.
class grouping {
public:
  grouping(const onnx::GraphProto& g, std::size_t depth) : module_of_(g.node_size()) {
    std::map<std::string, std::size_t> producer; // tensor -> operator
    std::vector<int> unplaced;
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& node = g.node(i);
      const auto scope = scope_of(node.name());
      if (depth == 0 && !node.name().empty()) {
        module_of_[static_cast<std::size_t>(i)] = named(node.name());
      } else if (depth > 0 && !scope.empty()) {
        const auto kept = static_cast<std::ptrdiff_t>(std::min(depth, scope.size()));
        module_of_[static_cast<std::size_t>(i)] =
          named(module_name({scope.begin(), scope.begin() + kept}));
      } else if (auto from = first_placed_producer(node, producer)) {
        module_of_[static_cast<std::size_t>(i)] = module_of_[*from]; // top-level glue, as "/Add"
      } else {
        unplaced.push_back(i); // a constant, say: it goes with what reads it
      }
      for (const auto& output : node.output())
        producer[output] = static_cast<std::size_t>(i);
    }
    place_with_readers(g, unplaced);
  }

  std::size_t module_of(int node) const { return *module_of_[static_cast<std::size_t>(node)]; }
  const std::vector<std::string>& names() const { return names_; }

private:
  std::size_t named(const std::string& name) {
    auto [at, fresh] = index_.emplace(name, names_.size());
    if (fresh)
      names_.push_back(name);
    return at->second;
  }

  std::optional<std::size_t>
  first_placed_producer(const onnx::NodeProto& node,
                        const std::map<std::string, std::size_t>& producer) {
    for (const auto& input : node.input())
      if (auto at = producer.find(input); at != producer.end() && module_of_[at->second])
        return at->second;
    return std::nullopt;
  }

  /// Unplaced operators join the module of their first reader, or one named "model".
  void place_with_readers(const onnx::GraphProto& g, const std::vector<int>& unplaced) {
    std::map<std::string, std::size_t> first_reader;
    for (int i = g.node_size(); i-- > 0;)
      for (const auto& input : g.node(i).input())
        first_reader[input] = static_cast<std::size_t>(i);
    for (auto i = unplaced.rbegin(); i != unplaced.rend(); ++i) { // readers after producers
      std::optional<std::size_t> module;
      for (const auto& output : g.node(*i).output())
        if (auto at = first_reader.find(output); at != first_reader.end() && module_of_[at->second])
          module = module_of_[at->second];
      module_of_[static_cast<std::size_t>(*i)] = module ? *module : named("model");
    }
  }

  std::vector<std::optional<std::size_t>> module_of_;
  std::vector<std::string> names_;
  std::map<std::string, std::size_t> index_;
};

/// Bytes of one element of an ONNX tensor type (4 when unknown).
double element_bytes(int type) {
  switch (type) {
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64: return 8;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16: return 2;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL: return 1;
  default: return 4;
  }
}

/// What `node` reads: its inputs, and what its subgraphs' operators read from outside them
/// (an If's branch or a Loop's body may read any tensor of the graph around it).
void add_reads(const onnx::NodeProto& node, std::vector<std::string>& reads) {
  reads.insert(reads.end(), node.input().begin(), node.input().end());
  for (const auto& a : node.attribute()) {
    if (!a.has_g())
      continue;
    std::set<std::string> inside;
    for (const auto& v : a.g().input())
      inside.insert(v.name());
    std::vector<std::string> below;
    for (const auto& n : a.g().node()) {
      add_reads(n, below);
      inside.insert(n.output().begin(), n.output().end());
    }
    for (auto& r : below)
      if (!inside.contains(r))
        reads.push_back(std::move(r));
  }
}

std::string listed(const std::vector<std::string>& items, std::size_t at_most = 10) {
  std::string all;
  for (std::size_t i = 0; i < std::min(items.size(), at_most); ++i)
    all += (i ? ", " : "") + items[i];
  if (items.size() > at_most)
    all += " and " + std::to_string(items.size() - at_most) + " more";
  return all;
}

onnx_model model_of(onnx::ModelProto& proto, const onnx_options& options) {
  const shape_table shapes{proto, options};
  const auto& g = proto.graph();
  const auto picked =
    options.group_depth ? picked_depth{*options.group_depth, {}} : repeated_block_depth(g);
  const auto depth = picked.depth;
  const grouping groups{g, depth};
  const auto& names = groups.names();
  if (names.size() < 2)
    throw invalid_argument("model_from_onnx: grouping at depth " + std::to_string(depth) +
                           " makes one module ('" + names.front() + "'): nothing to place apart");
  std::map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& t : g.initializer())
    initializers.emplace(t.name(), &t);
  onnx_model model;
  model.group_depth = depth;
  model.repeated_blocks = picked.blocks;
  for (const auto& name : names)
    model.modules.push_back({name, 0, 0.0});
  std::map<std::string, std::size_t> producer; // tensor -> module
  std::set<std::string> owned; // initializers counted (once, where first read)
  std::map<std::pair<std::size_t, std::size_t>, double> flows;
  std::set<std::pair<std::string, std::size_t>> counted; // (tensor, reader module)
  std::set<std::string> unknown_operators;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& node = g.node(i);
    const auto m = groups.module_of(i);
    auto& spec = model.modules[m];
    *spec.complexity += detail::flops_of(node, shapes, unknown_operators);
    std::vector<std::string> reads;
    add_reads(node, reads);
    for (const auto& input : reads) {
      if (input.empty())
        continue; // an omitted optional input
      if (auto init = initializers.find(input); init != initializers.end()) {
        if (owned.insert(input).second) {
          const auto bytes =
            detail::element_count(shapes.shape(input)) * element_bytes(init->second->data_type());
          model.parameter_bytes += bytes;
          spec.size_bytes += bytes * options.size_multiplier;
        }
      } else if (auto from = producer.find(input);
                 from != producer.end() && from->second != m && counted.emplace(input, m).second) {
        flows[{from->second, m}] +=
          detail::element_count(shapes.shape(input)) * options.dtype_bytes;
      }
    }
    for (const auto& output : node.output()) {
      if (output.empty())
        continue;
      producer[output] = m;
      spec.size_bytes += detail::element_count(shapes.shape(output)) * options.dtype_bytes;
    }
  }
  for (const auto& [pair, bytes] : flows)
    model.connections.push_back({pair.first, pair.second, bytes});
  if (!shapes.estimated().empty())
    model.warnings.push_back(
      "model_from_onnx: the shapes of " + std::to_string(shapes.estimated().size()) +
      " tensors are estimates from their producers' inputs: " + listed(shapes.estimated()));
  if (!unknown_operators.empty())
    model.warnings.push_back(
      "model_from_onnx: operators without a FLOP count, counted as one per output element: " +
      listed({unknown_operators.begin(), unknown_operators.end()}));
  return model;
}

} // namespace

onnx_model model_from_onnx_bytes(const std::string& bytes, const onnx_options& options) {
  auto proto = detail::read_onnx_skeleton_bytes(bytes);
  return model_of(proto, options);
}

onnx_model model_from_onnx(const std::filesystem::path& path, const onnx_options& options) {
  try {
    auto proto = detail::read_onnx_skeleton(path);
    return model_of(proto, options);
  } catch (const invalid_argument& e) {
    throw invalid_argument(path.string() + ": " + e.what());
  }
}

bool onnx_available() noexcept { return true; }

} // namespace troupe
