#include "troupe/graph/evaluate.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/graph/analysis.hpp"

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xsort.hpp>

#include <unordered_map>

namespace troupe::graph {

namespace {

using value = xt::xarray<double>;

std::vector<std::size_t> as_sizes(const std::vector<std::int64_t>& v) {
  return {v.begin(), v.end()};
}

value input(const node_ptr& n, const tensor_map& inputs) {
  auto at = inputs.find(n->name());
  if (at == inputs.end())
    throw invalid_argument("evaluate: no input '" + n->name() + "'");
  const shape_t given(at->second.shape().begin(), at->second.shape().end());
  if (given != n->shape())
    throw invalid_argument("evaluate: input '" + n->name() + "' has " +
                           std::to_string(given.size()) + " dimensions or other sizes than the " +
                           "placeholder declares");
  return at->second;
}

/// `a op s`, or `s op a` when `scalar_first`.
value binary_with_scalar(const std::string& op, const value& a, double s, bool scalar_first) {
  if (op == "add")
    return a + s;
  if (op == "mul")
    return a * s;
  if (op == "sub")
    return scalar_first ? value(s - a) : value(a - s);
  if (op == "div")
    return scalar_first ? value(s / a) : value(a / s);
  if (op == "pow")
    return scalar_first ? value(xt::pow(s, a)) : value(xt::pow(a, s));
  if (op == "max")
    return xt::maximum(a, s);
  return xt::minimum(a, s);
}

value elementwise(const std::string& op, const std::vector<const value*>& in) {
  const auto& a = *in[0];
  if (op == "neg")
    return -a;
  if (op == "exp")
    return xt::exp(a);
  if (op == "log")
    return xt::log(a);
  if (op == "sqrt")
    return xt::sqrt(a);
  if (op == "abs")
    return xt::abs(a);
  const auto& b = *in[1];
  // A 0-d operand (a constant) as a scalar: xtensor then takes its linear, vectorized path
  // rather than broadcasting element by element (a third of a small part's time).
  if (b.dimension() == 0 && a.dimension() != 0)
    return binary_with_scalar(op, a, b(), false);
  if (a.dimension() == 0 && b.dimension() != 0)
    return binary_with_scalar(op, b, a(), true);
  if (op == "add")
    return a + b;
  if (op == "sub")
    return a - b;
  if (op == "mul")
    return a * b;
  if (op == "div")
    return a / b;
  if (op == "pow")
    return xt::pow(a, b);
  if (op == "max")
    return xt::maximum(a, b);
  return xt::minimum(a, b);
}

value reduce(const node_ptr& n, const value& x) {
  if (n->ints().empty())
    return x;
  const auto axes = as_sizes(n->ints());
  const auto& op = n->name();
  if (op == "sum")
    return xt::sum(x, axes);
  if (op == "prod")
    return xt::prod(x, axes);
  if (op == "max")
    return xt::amax(x, axes);
  return xt::amin(x, axes);
}

/// Writes each input into its slab of `out` along `axis` (width 1 each for stack, its own extent
/// for concatenate). Row-major: `out` is (outer, axis extent, inner) blocks, and each input
/// fills a run of every outer block.
value joined(const node_ptr& n, const std::vector<const value*>& in, bool stacking) {
  value out = value::from_shape(as_sizes(n->shape()));
  const auto axis = static_cast<std::size_t>(n->ints()[0]);
  std::size_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < axis; ++d)
    outer *= out.shape()[d];
  for (std::size_t d = axis + 1; d < out.dimension(); ++d)
    inner *= out.shape()[d];
  const std::size_t extent = out.shape()[axis];
  std::size_t at = 0;
  for (const auto* part : in) {
    const std::size_t width = stacking ? 1 : part->shape()[axis];
    const auto block = width * inner;
    for (std::size_t o = 0; o < outer; ++o)
      std::copy_n(part->data() + o * block, block, out.data() + (o * extent + at) * inner);
    at += width;
  }
  return out;
}

/// Einsum by a loop over every index: the reference, not the fast way.
value einsum(const node_ptr& n, const std::vector<const value*>& in) {
  const auto [inputs, output] = einsum_subscripts(n->name());
  std::string letters;
  std::map<char, std::size_t> size;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    for (std::size_t d = 0; d < inputs[i].size(); ++d)
      if (size.emplace(inputs[i][d], in[i]->shape()[d]).second)
        letters += inputs[i][d];
  value out = xt::zeros<double>(as_sizes(n->shape()));
  std::map<char, std::size_t> index;
  for (char c : letters)
    index[c] = 0;
  std::vector<std::size_t> at;
  for (bool more = true; more;) {
    double product = 1.0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      at.clear();
      for (char c : inputs[i])
        at.push_back(index[c]);
      product *= in[i]->element(at.begin(), at.end());
    }
    at.clear();
    for (char c : output)
      at.push_back(index[c]);
    out.element(at.begin(), at.end()) += product;
    more = false;
    for (auto it = letters.rbegin(); it != letters.rend(); ++it)
      if (++index[*it] < size[*it]) {
        more = true;
        break;
      } else {
        index[*it] = 0;
      }
    if (letters.empty())
      break;
  }
  return out;
}

value compute(const node_ptr& n, const std::vector<const value*>& in, const tensor_map& inputs) {
  switch (n->what()) {
  case kind::placeholder: return input(n, inputs);
  case kind::size_param: {
    auto at = inputs.find(n->name());
    if (at == inputs.end())
      throw invalid_argument("evaluate: no size parameter '" + n->name() + "'");
    return at->second;
  }
  case kind::data: return *n->data();
  case kind::elementwise: return elementwise(n->name(), in);
  case kind::reduce: return reduce(n, *in[0]);
  case kind::stack: return joined(n, in, true);
  case kind::concatenate: return joined(n, in, false);
  case kind::reshape: {
    value r = *in[0];
    r.reshape(as_sizes(n->shape()));
    return r;
  }
  case kind::transpose: return xt::transpose(*in[0], as_sizes(n->ints()));
  case kind::roll:
    return xt::roll(*in[0], static_cast<std::ptrdiff_t>(n->ints()[0]),
                    static_cast<std::ptrdiff_t>(n->ints()[1]));
  case kind::einsum: return einsum(n, in);
  case kind::send: return *in[0]; // the value is stapled_to's; the data travels elsewhere
  case kind::recv:
    throw invalid_argument("evaluate: a distributed receive (from rank " +
                           std::to_string(n->ints()[0]) + ", tag '" + n->name() +
                           "') has a value only in execute_distributed_partition");
  case kind::outputs: break;
  }
  throw invalid_argument("evaluate: an outputs node is not a value");
}

} // namespace

tensor_map evaluate(const node_ptr& outputs, const tensor_map& inputs) {
  if (!outputs || outputs->what() != kind::outputs)
    throw invalid_argument("evaluate: give the outputs node (make_outputs) of the graph");
  const auto order = topological_order(outputs);
  std::unordered_map<const node*, std::size_t> uses;
  for (const auto& n : order)
    for (const auto& child : n->children())
      ++uses[child.get()];
  std::unordered_map<const node*, value> values;
  tensor_map results;
  for (const auto& n : order) {
    if (n->what() == kind::outputs) {
      for (std::size_t i = 0; i < n->children().size(); ++i)
        results[n->names()[i]] = values.at(n->children()[i].get());
      break;
    }
    std::vector<const value*> in;
    for (const auto& child : n->children())
      in.push_back(&values.at(child.get()));
    values[n.get()] = compute(n, in, inputs);
    for (const auto& child : n->children())
      if (--uses[child.get()] == 0)
        values.erase(child.get()); // its last user is done (the outputs node counts as one)
  }
  return results;
}

xt::xarray<double> evaluate_node(const node_ptr& n, const tensor_map& inputs) {
  return evaluate(make_outputs({{"value", n}}), inputs).at("value");
}

} // namespace troupe::graph
