#include "troupe/staged/mixed.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/staged/record.hpp"

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xsort.hpp>

#include <set>

namespace troupe::staged {

expr::expr(double value)
  : root_(std::make_shared<const node>(node{node::kind::constant, {}, value, {}, {}})) {}

expr expr::field(std::string name) {
  return expr{std::make_shared<const node>(node{node::kind::field, std::move(name), 0, {}, {}})};
}

expr expr::property(std::string name) {
  return expr{std::make_shared<const node>(node{node::kind::property, std::move(name), 0, {}, {}})};
}

expr expr::binary(const char* op, const expr& a, const expr& b) {
  return expr{std::make_shared<const node>(node{node::kind::operation, op, 0, {a, b}, {}})};
}

expr expr::unary(const char* op, const expr& a) {
  return expr{std::make_shared<const node>(node{node::kind::operation, op, 0, {a}, {}})};
}

expr expr::reduction(const char* op, const expr& a, std::vector<std::string> dims) {
  if (dims.empty())
    throw invalid_argument(std::string{op} + ": name the dims to reduce");
  return expr{
    std::make_shared<const node>(node{node::kind::operation, op, 0, {a}, std::move(dims)})};
}

namespace {

void collect(const expr& e, expr::node::kind wanted, std::set<std::string>& out) {
  const auto& n = e.root();
  if (n.what == wanted)
    out.insert(n.name);
  for (const auto& operand : n.operands)
    collect(operand, wanted, out);
}

/// `t`'s values with `result`'s axes, in its order: t's own transposed into it, the others of
/// size 1 (xtensor broadcasts them).
xt::xarray<double> aligned(const tensor& t, const shape& result) {
  std::vector<std::size_t> order, sizes;
  for (const auto& d : result.dims()) {
    if (t.dims().contains(d.name))
      order.push_back(t.dims().index_of(d.name));
    sizes.push_back(t.dims().contains(d.name) ? d.size : 1);
  }
  xt::xarray<double> values = xt::transpose(t.values(), order);
  values.reshape(sizes);
  return values;
}

xt::xarray<double> unary_values(const std::string& op, const xt::xarray<double>& a) {
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
  throw invalid_argument("staged: no element-wise operation '" + op + "'");
}

tensor binary(const std::string& op, const tensor& a, const tensor& b) {
  const auto result = a.dims().merged(b.dims()); // invalid_argument if a dim's sizes differ
  const auto x = aligned(a, result), y = aligned(b, result);
  xt::xarray<double> out;
  if (op == "add")
    out = x + y;
  else if (op == "sub")
    out = x - y;
  else if (op == "mul")
    out = x * y;
  else if (op == "div")
    out = x / y;
  else
    throw invalid_argument("staged: no operation '" + op + "'");
  return {std::move(out), result};
}

tensor reduced(const std::string& op, const tensor& a, const std::vector<std::string>& dims) {
  std::vector<std::size_t> axes;
  std::vector<std::string> names;
  for (const auto& d : a.dims().dims())
    if (std::find(dims.begin(), dims.end(), d.name) != dims.end()) {
      axes.push_back(a.dims().index_of(d.name));
      names.push_back(d.name);
    }
  if (axes.empty())
    return a; // none of its dims: the slices reduced them already, or it never had them
  const auto rest = a.dims().without(dim_filter::names(names));
  const auto& v = a.values();
  if (op == "sum")
    return {xt::sum(v, axes), rest};
  if (op == "mean")
    return {xt::mean(v, axes), rest};
  if (op == "max")
    return {xt::amax(v, axes), rest};
  if (op == "min")
    return {xt::amin(v, axes), rest};
  throw invalid_argument("staged: no reduction '" + op + "'");
}

} // namespace

std::vector<std::string> expr::fields() const {
  std::set<std::string> out;
  collect(*this, node::kind::field, out);
  return {out.begin(), out.end()};
}

std::vector<std::string> expr::properties() const {
  std::set<std::string> out;
  collect(*this, node::kind::property, out);
  return {out.begin(), out.end()};
}

tensor expr::evaluate(const record& r) const {
  const auto& n = *root_;
  switch (n.what) {
  case node::kind::constant: return tensor::scalar(n.value);
  case node::kind::field:
  case node::kind::property: return r.get(n.name);
  case node::kind::operation: break;
  }
  std::vector<tensor> operands;
  for (const auto& operand : n.operands)
    operands.push_back(operand.evaluate(r));
  return apply_operation(n.name, operands, n.dims);
}

tensor apply_operation(const std::string& op, const std::vector<tensor>& operands,
                       const std::vector<std::string>& dims) {
  if (!dims.empty())
    return reduced(op, operands.at(0), dims);
  if (operands.size() == 2)
    return binary(op, operands[0], operands[1]);
  return {unary_values(op, operands.at(0).values()), operands[0].dims()};
}

tensor operation::apply(const record& r) const {
  std::vector<tensor> values;
  for (const auto& operand : operands)
    values.push_back(operand.name.empty() ? tensor::scalar(operand.value) : r.get(operand.name));
  return apply_operation(op, values, dims);
}

} // namespace troupe::staged
