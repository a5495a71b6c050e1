#include "troupe/graph/node.hpp"

#include "node_make.hpp"
#include "placeholder_names.hpp"
#include "troupe/graph/errors.hpp"

#include "troupe/actors/error.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>

namespace troupe::graph {

namespace {

/// FNV-1a: the same in every process and build, unlike std::hash.
class hasher {
public:
  void bytes(const void* data, std::size_t size) noexcept {
    const auto* at = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i)
      value_ = (value_ ^ at[i]) * 1099511628211ull;
  }
  template <class T>
  void value(const T& v) noexcept {
    bytes(&v, sizeof v);
  }
  void text(const std::string& s) noexcept {
    value(s.size());
    bytes(s.data(), s.size());
  }
  std::size_t done() const noexcept { return static_cast<std::size_t>(value_); }

private:
  std::uint64_t value_ = 14695981039346656037ull;
};

/// Size parameters' names by their dimension: builders and messages turn one into the other.
class symbol_table {
public:
  std::int64_t add(const std::string& name) {
    hasher h;
    h.text(name);
    // Negative, and the same in every process: the name's hash, its top bits cleared.
    const auto code = -1 - static_cast<std::int64_t>(h.done() >> 2);
    std::lock_guard guard{mutex_};
    names_.emplace(code, name);
    return code;
  }
  std::optional<std::string> name(std::int64_t code) const {
    std::lock_guard guard{mutex_};
    auto at = names_.find(code);
    return at == names_.end() ? std::nullopt : std::optional{at->second};
  }

private:
  mutable std::mutex mutex_;
  std::map<std::int64_t, std::string> names_;
};

symbol_table& symbols() {
  static symbol_table table;
  return table;
}

bool has_symbols(const shape_t& shape) {
  return std::any_of(shape.begin(), shape.end(), [](std::int64_t d) { return is_symbolic(d); });
}

std::int64_t checked_axis(std::int64_t axis, std::size_t ndim, const char* what) {
  const auto n = static_cast<std::int64_t>(ndim);
  if (axis < -n || axis >= n)
    throw invalid_argument(std::string{what} + ": axis " + std::to_string(axis) +
                           " is out of range for " + std::to_string(ndim) + " dimensions");
  return axis < 0 ? axis + n : axis;
}

using detail::make;

dtype widest(const std::vector<node_ptr>& nodes) {
  for (const auto& n : nodes)
    if (n->type() == dtype::float64)
      return dtype::float64;
  return nodes.empty() ? dtype::float64 : dtype::float32;
}

shape_t broadcast(const std::vector<node_ptr>& operands, const std::string& op) {
  std::size_t ndim = 0;
  for (const auto& o : operands)
    ndim = std::max(ndim, o->shape().size());
  shape_t out(ndim, 1);
  for (const auto& o : operands) {
    const auto& s = o->shape();
    for (std::size_t i = 0; i < s.size(); ++i) {
      auto& d = out[ndim - s.size() + i];
      if (s[i] == d || s[i] == 1)
        continue;
      if (d != 1)
        throw invalid_argument(op + ": shapes do not broadcast: " + describe(s) + " against " +
                               describe(out));
      d = s[i];
    }
  }
  return out;
}

void require_operands(const std::vector<node_ptr>& operands, const char* what) {
  if (operands.empty())
    throw invalid_argument(std::string{what} + ": no operands");
  for (const auto& o : operands)
    if (!o)
      throw invalid_argument(std::string{what} + ": an operand is null");
}

} // namespace

std::string symbol_name(std::int64_t dimension) {
  if (!is_symbolic(dimension))
    throw invalid_argument("symbol_name: " + std::to_string(dimension) + " is a plain size");
  if (auto name = symbols().name(dimension))
    return *name;
  throw invalid_argument("symbol_name: no size parameter made in this process has dimension " +
                         std::to_string(dimension));
}

std::string describe(const shape_t& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + (is_symbolic(shape[i]) ? symbols().name(shape[i]).value_or("?")
                                                     : std::to_string(shape[i]));
  return text + ")";
}

std::int64_t extent(const node_ptr& size_parameter) {
  if (!size_parameter || size_parameter->what() != kind::size_param)
    throw invalid_argument("extent: give a size_param node");
  return symbols().add(size_parameter->name());
}

bool is_input(const node& n) noexcept {
  return n.what() == kind::placeholder || n.what() == kind::data || n.what() == kind::size_param;
}

std::pair<std::vector<std::string>, std::string> einsum_subscripts(const std::string& spec) {
  const auto arrow = spec.find("->");
  if (arrow == std::string::npos)
    throw invalid_argument("einsum '" + spec + "': write the output, as in 'ij,jk->ik'");
  std::vector<std::string> inputs;
  for (std::size_t start = 0;;) {
    const auto comma = spec.find(',', start);
    inputs.push_back(spec.substr(start, std::min(comma, arrow) - start));
    if (comma == std::string::npos || comma > arrow)
      break;
    start = comma + 1;
  }
  return {std::move(inputs), spec.substr(arrow + 2)};
}

const char* kind_name(kind k) noexcept {
  static constexpr std::array<const char*, 15> names{
    "placeholder", "size_param",  "data",    "elementwise", "reduce",
    "stack",       "concatenate", "reshape", "transpose",   "roll",
    "einsum",      "outputs",     "send",    "recv",        "index"};
  return names[static_cast<std::size_t>(k)];
}

node::node(node_fields fields, std::vector<node_ptr> children)
  : node(sharing{}, std::make_shared<const node_fields>([&] {
           hasher h;
           h.value(fields.what);
           h.text(fields.name);
           h.value(fields.type);
           h.value(fields.shape.size());
           for (auto d : fields.shape)
             h.value(d);
           h.value(fields.ints.size());
           for (auto i : fields.ints)
             h.value(i);
           for (const auto& n : fields.names)
             h.text(n);
           for (const auto& t : fields.tags)
             h.text(t);
           if (fields.data)
             h.bytes(fields.data->data(), fields.data->size() * sizeof(double));
           fields.hash = h.done();
           return std::move(fields);
         }()),
         std::move(children)) {}

node::node(sharing, std::shared_ptr<const node_fields> fields, std::vector<node_ptr> children)
  : fields_(std::move(fields)), children_(std::move(children)) {
  hasher h;
  h.value(fields_->hash);
  h.value(children_.size());
  for (const auto& c : children_)
    h.value(c->hash());
  hash_ = h.done();
}

bool node_fields::operator==(const node_fields& other) const {
  if (hash != other.hash || what != other.what || name != other.name || type != other.type ||
      shape != other.shape || ints != other.ints || names != other.names || tags != other.tags ||
      (data == nullptr) != (other.data == nullptr))
    return false;
  return !data ||
         (data->shape() == other.data->shape() &&
          std::memcmp(data->data(), other.data->data(), data->size() * sizeof(double)) == 0);
}

node::~node() {
  // Children go to a per-thread list, emptied by the outermost destructor: a child destroyed
  // there adds its own children to the list and returns, so the depth is two, not the DAG's.
  thread_local std::vector<node_ptr> doomed;
  thread_local bool draining = false;
  for (auto& child : children_)
    doomed.push_back(std::move(child));
  if (draining)
    return;
  draining = true;
  while (!doomed.empty()) {
    auto last = std::move(doomed.back());
    doomed.pop_back();
    last.reset(); // may run ~node, which only appends
  }
  draining = false;
}

std::int64_t node::size() const noexcept {
  if (has_symbols(shape()))
    return -1;
  return std::accumulate(shape().begin(), shape().end(), std::int64_t{1}, std::multiplies<>{});
}

bool node::operator==(const node& other) const {
  if (this == &other)
    return true;
  if (hash_ != other.hash_ || children_.size() != other.children_.size() ||
      (fields_ != other.fields_ && !(*fields_ == *other.fields_)))
    return false;
  for (std::size_t i = 0; i < children_.size(); ++i)
    if (children_[i] != other.children_[i] && !(*children_[i] == *other.children_[i]))
      return false;
  return true;
}

node_ptr node::with_children(std::vector<node_ptr> children) const {
  return std::make_shared<const node>(sharing{}, fields_, std::move(children));
}

node_ptr node::with_tag(std::string tag) const {
  auto fields = *fields_;
  fields.tags.insert(std::move(tag));
  return std::make_shared<const node>(std::move(fields), children_);
}

node_ptr placeholder(std::string name, shape_t shape, dtype type) {
  if (name.starts_with(detail::reserved_prefix))
    throw name_clash_error("placeholder '" + name + "': names beginning with '" +
                           std::string{detail::reserved_prefix} +
                           "' are troupe's own (the placeholders it makes between parts)");
  return detail::internal_placeholder(std::move(name), std::move(shape), type);
}

node_ptr detail::make(kind what, std::string name, std::vector<node_ptr> children, shape_t shape,
                      dtype type, std::vector<std::int64_t> ints, std::vector<std::string> names,
                      std::shared_ptr<const xt::xarray<double>> values) {
  return std::make_shared<const node>(node_fields{what,
                                                  std::move(name),
                                                  std::move(shape),
                                                  type,
                                                  std::move(ints),
                                                  std::move(names),
                                                  std::move(values),
                                                  {}},
                                      std::move(children));
}

node_ptr detail::internal_placeholder(std::string name, shape_t shape, dtype type) {
  if (name.empty())
    throw invalid_argument("placeholder: a name is needed");
  // A size parameter's dimension makes the parameter a child: it is read before the placeholder.
  std::vector<node_ptr> parameters;
  std::set<std::int64_t> seen;
  for (auto d : shape)
    if (is_symbolic(d) && seen.insert(d).second) {
      const auto parameter = symbols().name(d);
      if (!parameter)
        throw invalid_argument("placeholder '" + name + "': negative dimension " +
                               std::to_string(d) + " (a size parameter's comes from extent())");
      parameters.push_back(size_param(*parameter));
    }
  return make(kind::placeholder, std::move(name), std::move(parameters), std::move(shape), type);
}

node_ptr size_param(std::string name) {
  if (name.empty())
    throw invalid_argument("size_param: a name is needed");
  symbols().add(name); // so that its dimension names it in any process that made it
  return make(kind::size_param, std::move(name), {}, {}, dtype::float64);
}

node_ptr data(xt::xarray<double> values, dtype type) {
  shape_t shape(values.shape().begin(), values.shape().end());
  return make(kind::data, {}, {}, std::move(shape), type, {}, {},
              std::make_shared<const xt::xarray<double>>(std::move(values)));
}

node_ptr constant(double value) { return data(xt::xarray<double>(value)); }

node_ptr elementwise(std::string op, std::vector<node_ptr> operands) {
  static const std::set<std::string> binary{"add", "sub", "mul", "div", "pow", "max", "min"};
  static const std::set<std::string> unary{"neg", "exp", "log", "sqrt", "abs"};
  require_operands(operands, "elementwise");
  const auto arity = binary.contains(op) ? 2u : unary.contains(op) ? 1u : 0u;
  if (arity == 0)
    throw invalid_argument("elementwise: unknown operation '" + op + "'");
  if (operands.size() != arity)
    throw invalid_argument("elementwise '" + op + "' takes " + std::to_string(arity) +
                           " operands, got " + std::to_string(operands.size()));
  auto shape = broadcast(operands, op);
  const auto type = widest(operands);
  return make(kind::elementwise, std::move(op), std::move(operands), std::move(shape), type);
}

node_ptr reduce(node_ptr x, std::vector<std::int64_t> axes, std::string op) {
  require_operands({x}, "reduce");
  if (op != "sum" && op != "prod" && op != "max" && op != "min")
    throw invalid_argument("reduce: unknown operation '" + op + "'");
  for (auto& a : axes)
    a = checked_axis(a, x->shape().size(), "reduce");
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    throw invalid_argument("reduce: an axis is listed twice");
  shape_t shape;
  for (std::size_t i = 0; i < x->shape().size(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(i)))
      shape.push_back(x->shape()[i]);
  const auto type = x->type();
  return make(kind::reduce, std::move(op), {std::move(x)}, std::move(shape), type, std::move(axes));
}

node_ptr stack(std::vector<node_ptr> arrays, std::int64_t axis) {
  require_operands(arrays, "stack");
  for (const auto& a : arrays)
    if (a->shape() != arrays.front()->shape())
      throw invalid_argument("stack: shapes differ: " + describe(a->shape()) + " and " +
                             describe(arrays.front()->shape()));
  axis = checked_axis(axis, arrays.front()->shape().size() + 1, "stack");
  auto shape = arrays.front()->shape();
  shape.insert(shape.begin() + axis, static_cast<std::int64_t>(arrays.size()));
  const auto type = widest(arrays);
  return make(kind::stack, {}, std::move(arrays), std::move(shape), type, {axis});
}

node_ptr concatenate(std::vector<node_ptr> arrays, std::int64_t axis) {
  require_operands(arrays, "concatenate");
  const auto& first = arrays.front()->shape();
  axis = checked_axis(axis, first.size(), "concatenate");
  auto shape = first;
  shape[static_cast<std::size_t>(axis)] = 0;
  for (const auto& a : arrays) {
    auto s = a->shape();
    if (s.size() != first.size())
      throw invalid_argument("concatenate: dimensions differ: " + describe(s) + " and " +
                             describe(first));
    if (is_symbolic(s[static_cast<std::size_t>(axis)]))
      throw invalid_argument("concatenate: along a size parameter's dimension, in " + describe(s) +
                             ": not supported");
    shape[static_cast<std::size_t>(axis)] += s[static_cast<std::size_t>(axis)];
    s[static_cast<std::size_t>(axis)] = first[static_cast<std::size_t>(axis)];
    if (s != first)
      throw invalid_argument("concatenate: shapes differ off axis " + std::to_string(axis) + ": " +
                             describe(a->shape()) + " and " + describe(first));
  }
  const auto type = widest(arrays);
  return make(kind::concatenate, {}, std::move(arrays), std::move(shape), type, {axis});
}

namespace {

/// `shape` with its one -1 (numpy's "the rest") worked out from `x`'s size.
shape_t inferred_shape(const node& x, shape_t shape) {
  const auto unknown = [](std::int64_t d) { return d == -1 && !symbols().name(d); };
  const auto count = std::count_if(shape.begin(), shape.end(), unknown);
  if (count == 0)
    return shape;
  if (count > 1)
    throw invalid_argument("reshape: " + describe(x.shape()) + " to " + describe(shape) +
                           ": at most one dimension may be -1");
  std::int64_t rest = 1;
  for (auto d : shape)
    if (!unknown(d))
      rest *= d;
  if (has_symbols(x.shape()) || rest <= 0 || x.size() % rest != 0)
    throw invalid_argument("reshape: " + describe(x.shape()) + " to " + describe(shape) +
                           ": -1 stands for no whole number of elements");
  std::replace_if(shape.begin(), shape.end(), unknown, x.size() / rest);
  return shape;
}

} // namespace

node_ptr reshape(node_ptr x, shape_t shape) {
  require_operands({x}, "reshape");
  shape = inferred_shape(*x, std::move(shape));
  if (has_symbols(shape) || has_symbols(x->shape())) {
    // Sizes that cannot be compared: the same parameters on both sides, the rest equal.
    const auto split = [](const shape_t& s) {
      std::multiset<std::int64_t> parameters;
      std::int64_t plain = 1;
      for (auto d : s)
        is_symbolic(d) ? void(parameters.insert(d)) : void(plain *= d);
      return std::pair{parameters, plain};
    };
    if (split(shape) != split(x->shape()))
      throw invalid_argument("reshape: " + describe(x->shape()) + " to " + describe(shape) +
                             ": the size parameters or the other sizes differ");
    const auto type = x->type();
    return make(kind::reshape, {}, {std::move(x)}, std::move(shape), type);
  }
  const auto size =
    std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>{});
  if (size != x->size())
    throw invalid_argument("reshape: " + describe(x->shape()) + " has " +
                           std::to_string(x->size()) + " elements, " + describe(shape) + " " +
                           std::to_string(size));
  const auto type = x->type();
  return make(kind::reshape, {}, {std::move(x)}, std::move(shape), type);
}

node_ptr transpose(node_ptr x, std::vector<std::int64_t> axes) {
  require_operands({x}, "transpose");
  const auto ndim = x->shape().size();
  if (axes.empty())
    for (std::size_t i = 0; i < ndim; ++i)
      axes.push_back(static_cast<std::int64_t>(ndim - 1 - i));
  auto sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    if (sorted.size() != ndim || sorted[i] != static_cast<std::int64_t>(i))
      throw invalid_argument("transpose: the axes are not a permutation of " +
                             std::to_string(ndim) + " dimensions");
  shape_t shape;
  for (auto a : axes)
    shape.push_back(x->shape()[static_cast<std::size_t>(a)]);
  const auto type = x->type();
  return make(kind::transpose, {}, {std::move(x)}, std::move(shape), type, std::move(axes));
}

node_ptr roll(node_ptr x, std::int64_t shift, std::int64_t axis) {
  require_operands({x}, "roll");
  axis = checked_axis(axis, x->shape().size(), "roll");
  auto shape = x->shape();
  const auto type = x->type();
  return make(kind::roll, {}, {std::move(x)}, std::move(shape), type, {shift, axis});
}

node_ptr einsum(std::string subscripts, std::vector<node_ptr> operands) {
  require_operands(operands, "einsum");
  const auto [inputs, output] = einsum_subscripts(subscripts);
  if (inputs.size() != operands.size())
    throw invalid_argument("einsum '" + subscripts + "': " + std::to_string(inputs.size()) +
                           " subscripts for " + std::to_string(operands.size()) + " operands");
  std::map<char, std::int64_t> sizes;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& s = operands[i]->shape();
    if (inputs[i].size() != s.size())
      throw invalid_argument("einsum '" + subscripts + "': '" + inputs[i] + "' for shape " +
                             describe(s));
    for (std::size_t d = 0; d < s.size(); ++d) {
      auto [at, fresh] = sizes.emplace(inputs[i][d], s[d]);
      if (!fresh && at->second != s[d])
        throw invalid_argument("einsum '" + subscripts + "': index '" +
                               std::string(1, inputs[i][d]) + "' has sizes " +
                               std::to_string(at->second) + " and " + std::to_string(s[d]));
    }
  }
  shape_t shape;
  for (char c : output) {
    auto at = sizes.find(c);
    if (at == sizes.end())
      throw invalid_argument("einsum '" + subscripts + "': output index '" + std::string(1, c) +
                             "' is in no input");
    shape.push_back(at->second);
  }
  const auto type = widest(operands);
  return make(kind::einsum, std::move(subscripts), std::move(operands), std::move(shape), type);
}

node_ptr make_distributed_recv(int src_rank, std::string tag, shape_t shape, dtype type) {
  if (src_rank < 0)
    throw invalid_argument("make_distributed_recv: rank " + std::to_string(src_rank));
  for (auto d : shape)
    if (d < 0)
      throw invalid_argument("make_distributed_recv: a receive's shape must be plain sizes, got " +
                             describe(shape));
  return make(kind::recv, std::move(tag), {}, std::move(shape), type, {src_rank});
}

node_ptr staple_distributed_send(node_ptr data, int dest_rank, std::string tag,
                                 node_ptr stapled_to) {
  require_operands({data, stapled_to}, "staple_distributed_send");
  if (dest_rank < 0)
    throw invalid_argument("staple_distributed_send: rank " + std::to_string(dest_rank));
  auto shape = stapled_to->shape();
  const auto type = stapled_to->type();
  return make(kind::send, std::move(tag), {std::move(stapled_to), std::move(data)},
              std::move(shape), type, {dest_rank});
}

node_ptr make_outputs(const std::map<std::string, node_ptr>& named) {
  std::vector<node_ptr> children;
  std::vector<std::string> names;
  for (const auto& [name, n] : named) {
    if (!n)
      throw invalid_argument("make_outputs: output '" + name + "' is null");
    names.push_back(name);
    children.push_back(n);
  }
  return make(kind::outputs, {}, std::move(children), {}, dtype::float64, {}, std::move(names));
}

node_ptr operator+(const node_ptr& a, const node_ptr& b) { return elementwise("add", {a, b}); }
node_ptr operator-(const node_ptr& a, const node_ptr& b) { return elementwise("sub", {a, b}); }
node_ptr operator*(const node_ptr& a, const node_ptr& b) { return elementwise("mul", {a, b}); }
node_ptr operator/(const node_ptr& a, const node_ptr& b) { return elementwise("div", {a, b}); }
node_ptr operator-(const node_ptr& a) { return elementwise("neg", {a}); }
node_ptr operator+(const node_ptr& a, double b) { return a + constant(b); }
node_ptr operator*(double a, const node_ptr& b) { return constant(a) * b; }
node_ptr operator*(const node_ptr& a, double b) { return a * constant(b); }

} // namespace troupe::graph
