#include "troupe/graph/evaluate.hpp"

#include "indexing.hpp"
#include "placeholder_names.hpp"
#include "troupe/actors/error.hpp"

#include "address_index.hpp"

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xsort.hpp>

#include <cmath>
#include <map>

namespace troupe::graph {

namespace {

template <class T>
using value = xt::xarray<T>;

std::vector<std::size_t> as_sizes(const std::vector<std::int64_t>& v) {
  return {v.begin(), v.end()};
}

bool has_shape(const auto& array, const shape_t& shape) {
  return std::equal(
    array.shape().begin(), array.shape().end(), shape.begin(), shape.end(),
    [](std::size_t a, std::int64_t b) { return static_cast<std::int64_t>(a) == b; });
}

/// `a op s` (`s op a` when `scalar_first`) into `out`, which may be `a` itself: element-wise
/// operations read each element before they write it.
template <class T>
void binary_with_scalar(const std::string& op, const value<T>& a, T s, bool scalar_first,
                        value<T>& out) {
  if (op == "add")
    xt::noalias(out) = a + s;
  else if (op == "mul")
    xt::noalias(out) = a * s;
  else if (op == "sub")
    scalar_first ? void(xt::noalias(out) = s - a) : void(xt::noalias(out) = a - s);
  else if (op == "div")
    scalar_first ? void(xt::noalias(out) = s / a) : void(xt::noalias(out) = a / s);
  else if (op == "pow")
    scalar_first ? void(xt::noalias(out) = xt::pow(s, a)) : void(xt::noalias(out) = xt::pow(a, s));
  else if (op == "max")
    xt::noalias(out) = xt::maximum(a, s);
  else
    xt::noalias(out) = xt::minimum(a, s);
}

/// `op` of `in` into `out`, which may be one of `in` (of the output's shape: one that is
/// broadcast is never reused).
template <class T>
void elementwise(const std::string& op, const std::vector<const value<T>*>& in, value<T>& out) {
  const auto& a = *in[0];
  if (op == "neg")
    xt::noalias(out) = -a;
  else if (op == "exp")
    xt::noalias(out) = xt::exp(a);
  else if (op == "log")
    xt::noalias(out) = xt::log(a);
  else if (op == "sqrt")
    xt::noalias(out) = xt::sqrt(a);
  else if (op == "abs")
    xt::noalias(out) = xt::abs(a);
  else {
    const auto& b = *in[1];
    // A 0-d operand (a constant) as a scalar: xtensor then takes its linear, vectorized path
    // rather than broadcasting element by element (a third of a small part's time).
    if (b.dimension() == 0 && a.dimension() != 0)
      binary_with_scalar(op, a, b(), false, out);
    else if (a.dimension() == 0 && b.dimension() != 0)
      binary_with_scalar(op, b, a(), true, out);
    else if (op == "add")
      xt::noalias(out) = a + b;
    else if (op == "sub")
      xt::noalias(out) = a - b;
    else if (op == "mul")
      xt::noalias(out) = a * b;
    else if (op == "div")
      xt::noalias(out) = a / b;
    else if (op == "pow")
      xt::noalias(out) = xt::pow(a, b);
    else if (op == "max")
      xt::noalias(out) = xt::maximum(a, b);
    else
      xt::noalias(out) = xt::minimum(a, b);
  }
}

template <class T>
value<T> reduce(const node_ptr& n, const value<T>& x) {
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

/// Writes each input into its slab of the output along `axis` (width 1 each for stack, its own
/// extent for concatenate). Row-major: the output is (outer, axis extent, inner) blocks, and
/// each input fills a run of every outer block.
template <class T>
value<T> joined(const node_ptr& n, const std::vector<std::size_t>& shape,
                const std::vector<const value<T>*>& in, bool stacking) {
  value<T> out = value<T>::from_shape(shape);
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
template <class T>
value<T> einsum(const node_ptr& n, const std::vector<std::size_t>& shape,
                const std::vector<const value<T>*>& in) {
  const auto [inputs, output] = einsum_subscripts(n->name());
  std::string letters;
  std::map<char, std::size_t> size;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    for (std::size_t d = 0; d < inputs[i].size(); ++d)
      if (size.emplace(inputs[i][d], in[i]->shape()[d]).second)
        letters += inputs[i][d];
  value<T> out = xt::zeros<T>(shape);
  std::map<char, std::size_t> index;
  for (char c : letters)
    index[c] = 0;
  std::vector<std::size_t> at;
  for (bool more = true; more;) {
    T product = 1;
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

/// One evaluation: values by topological position, each either made here (owned) or read where
/// it is (an input, a data node's array in double), and freed after its last reader.
template <class T>
class evaluator {
public:
  evaluator(const node_ptr& outputs, const basic_tensor_map<T>& inputs)
    : inputs_(inputs), order_(detail::index_order(outputs)), uses_(order_.nodes.size()),
      owned_(order_.nodes.size()), value_(order_.nodes.size()) {
    detail::check_placeholder_names(order_.nodes);
    for (auto c : order_.child_positions)
      ++uses_[c];
  }

  basic_tensor_map<T> run() {
    basic_tensor_map<T> results;
    for (std::size_t i = 0; i < order_.nodes.size(); ++i) {
      const auto& n = order_.nodes[i];
      if (n->what() == kind::outputs) {
        const auto children = order_.children_of(i);
        for (std::size_t k = 0; k < children.size(); ++k)
          results.insert_or_assign(n->names()[k], take(children[k]));
        break; // the root: the last in the order
      }
      compute(i);
      for (auto c : order_.children_of(i))
        release(c);
    }
    return results;
  }

private:
  void compute(std::size_t i) {
    const auto& n = order_.nodes[i];
    switch (n->what()) {
    case kind::placeholder: value_[i] = &input(n); return;
    case kind::size_param: value_[i] = &bind(n); return;
    case kind::data: return data(i);
    case kind::elementwise: return own(i, elementwise_of(i));
    case kind::reduce: return own(i, reduce(n, operand(i, 0)));
    case kind::stack: return own(i, joined<T>(n, sizes_of(n), operands(i), true));
    case kind::concatenate: return own(i, joined<T>(n, sizes_of(n), operands(i), false));
    case kind::reshape: {
      auto r = take(order_.children_of(i)[0]);
      r.reshape(sizes_of(n));
      return own(i, std::move(r));
    }
    case kind::transpose: return own(i, xt::transpose(operand(i, 0), as_sizes(n->ints())));
    case kind::roll:
      return own(i, xt::roll(operand(i, 0), static_cast<std::ptrdiff_t>(n->ints()[0]),
                             static_cast<std::ptrdiff_t>(n->ints()[1])));
    case kind::einsum: return own(i, einsum<T>(n, sizes_of(n), operands(i)));
    case kind::send: // the value is stapled_to's; the data travels elsewhere
      return own(i, take(order_.children_of(i)[0]));
    case kind::recv:
      throw invalid_argument("evaluate: a distributed receive (from rank " +
                             std::to_string(n->ints()[0]) + ", tag '" + n->name() +
                             "') has a value only in execute_distributed_partition");
    case kind::index: {
      std::vector<const xt::xarray<T>*> values;
      for (std::size_t k = 0; k < n->children().size(); ++k)
        values.push_back(&operand(i, k));
      return own(i, detail::indexed<T>(*n, values));
    }
    case kind::outputs: break;
    }
    throw invalid_argument("evaluate: an outputs node is not a value");
  }

  const value<T>& input(const node_ptr& n) const {
    auto at = inputs_.find(n->name());
    if (at == inputs_.end())
      throw invalid_argument("evaluate: no input '" + n->name() + "'");
    const auto sizes = sizes_of(n);
    if (!std::equal(at->second.shape().begin(), at->second.shape().end(), sizes.begin(),
                    sizes.end()))
      throw invalid_argument(
        "evaluate: input '" + n->name() + "' has " + std::to_string(at->second.dimension()) +
        " dimensions or other sizes than the placeholder declares, " + describe(n->shape()));
    return at->second;
  }

  /// A size parameter's value, which every dimension of its name takes from here on.
  const value<T>& bind(const node_ptr& n) {
    auto at = inputs_.find(n->name());
    if (at == inputs_.end())
      throw invalid_argument("evaluate: no size parameter '" + n->name() + "'");
    const auto& v = at->second;
    if (v.size() != 1 || v.flat(0) < 0 || v.flat(0) != std::floor(v.flat(0)))
      throw invalid_argument("evaluate: size parameter '" + n->name() +
                             "' is not one whole number of at least 0");
    bound_[extent(n)] = static_cast<std::size_t>(v.flat(0));
    return v;
  }

  /// `n`'s shape, each size parameter's dimension its bound value.
  std::vector<std::size_t> sizes_of(const node_ptr& n) const {
    std::vector<std::size_t> sizes;
    for (auto d : n->shape()) {
      if (!is_symbolic(d)) {
        sizes.push_back(static_cast<std::size_t>(d));
        continue;
      }
      auto at = bound_.find(d);
      if (at == bound_.end())
        throw invalid_argument("evaluate: size parameter '" + symbol_name(d) +
                               "' is read by no placeholder of this graph");
      sizes.push_back(at->second);
    }
    return sizes;
  }

  void data(std::size_t i) {
    const auto& array = *order_.nodes[i]->data();
    if constexpr (std::is_same_v<T, double>)
      value_[i] = &array; // read where the node keeps it
    else
      own(i, xt::cast<T>(array));
  }

  value<T> elementwise_of(std::size_t i) {
    const auto& n = order_.nodes[i];
    auto in = operands(i);
    const auto children = order_.children_of(i);
    value<T> out;
    for (std::size_t k = 0; k < children.size(); ++k)
      if (reusable(children[k]) && has_shape(*in[k], sizes_of(n))) {
        out = std::move(owned_[children[k]]);
        in[k] = &out;
        break;
      }
    elementwise<T>(n->name(), in, out);
    return out;
  }

  /// Made here and read by nobody after the node being computed.
  bool reusable(std::uint32_t at) const { return uses_[at] == 1 && value_[at] == &owned_[at]; }

  /// The value at `at` for a reader that keeps it: moved if nobody else reads it, else copied.
  value<T> take(std::uint32_t at) { return reusable(at) ? std::move(owned_[at]) : *value_[at]; }

  void own(std::size_t i, value<T> v) {
    owned_[i] = std::move(v);
    value_[i] = &owned_[i];
  }

  const value<T>& operand(std::size_t i, std::size_t k) const {
    return *value_[order_.children_of(i)[k]];
  }

  std::vector<const value<T>*> operands(std::size_t i) const {
    std::vector<const value<T>*> in;
    for (auto c : order_.children_of(i))
      in.push_back(value_[c]);
    return in;
  }

  void release(std::uint32_t at) {
    if (--uses_[at] == 0) {
      owned_[at] = value<T>{};
      value_[at] = nullptr;
    }
  }

  const basic_tensor_map<T>& inputs_;
  detail::indexed_order order_;
  std::vector<std::uint32_t> uses_; // readers still to come, the outputs node included
  std::vector<value<T>> owned_;
  std::vector<const value<T>*> value_;
  std::map<std::int64_t, std::size_t> bound_; // size parameters' dimensions, by their values
};

} // namespace

template <class T>
requires std::same_as<T, float> || std::same_as<T, double> basic_tensor_map<T>
evaluate(const node_ptr& outputs, const basic_tensor_map<T>& inputs) {
  if (!outputs || outputs->what() != kind::outputs)
    throw invalid_argument("evaluate: give the outputs node (make_outputs) of the graph");
  return evaluator<T>{outputs, inputs}.run();
}

template basic_tensor_map<float> evaluate(const node_ptr&, const basic_tensor_map<float>&);
template basic_tensor_map<double> evaluate(const node_ptr&, const basic_tensor_map<double>&);

tensor_map evaluate(const node_ptr& outputs, const tensor_map& inputs) {
  return evaluate<double>(outputs, inputs);
}

xt::xarray<double> evaluate_node(const node_ptr& n, const tensor_map& inputs) {
  return evaluate(make_outputs({{"value", n}}), inputs).at("value");
}

} // namespace troupe::graph
