// MIXED properties (PhiML's requires=MIXED): a property written as an expression of named-dim
// operations, which parallel_compute splits into a node per operation, so that each runs where
// its dims allow: element-wise operations on the slices, a reduction needing only the dims it
// reduces. A reduction over both split dims and others is cut in two: over the others on the
// slices first, then over the split dims.
//
//   using troupe::staged::expr;
//   s.property({.name = "total",
//               .mixed = sum(expr::field("data") * 2.0, {"example", "x", "y"})});
//   // with "example" split: total_0_mul and total_1_sum (over x, y) on the slices, total (over
//   // example) on the host.
//
// Operations: + - * / (broadcast by dim name), neg, exp, log, sqrt, abs; sum, mean, max, min over
// named dims (a dim the operand lacks is left alone).
#pragma once

#include "troupe/staged/tensor.hpp"

#include <memory>
#include <string>
#include <vector>

namespace troupe::staged {

class record;

/// A MIXED property's expression (PhiML's requires=MIXED): named-dim operations over fields and
/// properties, which parallel_compute splits into a node per operation.
class expr {
public:
  /// A constant.
  expr(double value); // NOLINT: implicit, so that `x * 2.0` reads as it should
  /// The field `name` of the record.
  static expr field(std::string name);
  /// The property `name` of the record.
  static expr property(std::string name);

  /// a + b, broadcast by dim name.
  friend expr operator+(const expr& a, const expr& b) { return binary("add", a, b); }
  /// a - b, broadcast by dim name.
  friend expr operator-(const expr& a, const expr& b) { return binary("sub", a, b); }
  /// a * b, broadcast by dim name.
  friend expr operator*(const expr& a, const expr& b) { return binary("mul", a, b); }
  /// a / b, broadcast by dim name.
  friend expr operator/(const expr& a, const expr& b) { return binary("div", a, b); }
  /// -a.
  friend expr operator-(const expr& a) { return unary("neg", a); }
  /// e to the a, element-wise.
  friend expr exp(const expr& a) { return unary("exp", a); }
  /// The natural logarithm of a, element-wise.
  friend expr log(const expr& a) { return unary("log", a); }
  /// The square root of a, element-wise.
  friend expr sqrt(const expr& a) { return unary("sqrt", a); }
  /// |a|, element-wise.
  friend expr abs(const expr& a) { return unary("abs", a); }
  /// The sum of `a` over `dims` (a dim it lacks is left alone).
  friend expr sum(const expr& a, std::vector<std::string> dims) {
    return reduction("sum", a, std::move(dims));
  }
  /// The mean of `a` over `dims`.
  friend expr mean(const expr& a, std::vector<std::string> dims) {
    return reduction("mean", a, std::move(dims));
  }
  /// The largest element of `a` over `dims`.
  friend expr max(const expr& a, std::vector<std::string> dims) {
    return reduction("max", a, std::move(dims));
  }
  /// The smallest element of `a` over `dims`.
  friend expr min(const expr& a, std::vector<std::string> dims) {
    return reduction("min", a, std::move(dims));
  }

  struct node;
  /// The expression's tree.
  const node& root() const noexcept { return *root_; }

  /// The fields and properties it reads.
  std::vector<std::string> fields() const;
  /// The properties it reads.
  std::vector<std::string> properties() const;

  /// Its value on `r` (reading fields and properties there), in one go on this thread.
  tensor evaluate(const record& r) const;

private:
  explicit expr(std::shared_ptr<const node> root) : root_(std::move(root)) {}
  static expr binary(const char* op, const expr& a, const expr& b);
  static expr unary(const char* op, const expr& a);
  static expr reduction(const char* op, const expr& a, std::vector<std::string> dims);

  std::shared_ptr<const node> root_;
};

/// A node of an expression's tree.
struct expr::node {
  /// The kinds of node.
  enum class kind : std::uint8_t { constant, field, property, operation };
  /// What the node is.
  kind what;
  std::string name; ///< a field or property; an operation's op ("mul", "sum", ...)
  double value = 0; ///< a constant
  /// An operation's operands.
  std::vector<expr> operands;
  std::vector<std::string> dims; ///< a reduction's
};

/// One operation of a split MIXED property, as a plan names it: `op` of `operands` (names of
/// fields, properties or other operations, or constants), over `dims` for a reduction.
struct operation {
  /// An operand: a name, or a constant.
  struct operand {
    std::string name; ///< empty for a constant
    /// A constant operand's value.
    double value = 0;
    template <class Archive>
    void serialize(Archive& ar) {
      ar(name, value);
    }
  };
  /// The operation's node name in the plan.
  std::string name;
  /// What it does ("mul", "sum", ...).
  std::string op;
  /// What it operates on.
  std::vector<operand> operands;
  /// A reduction's dims.
  std::vector<std::string> dims;

  /// Its value, its named operands read from `r`.
  tensor apply(const record& r) const;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(name, op, operands, dims);
  }
};

/// `op` of named-dim tensors: element-wise ones broadcast by dim name (the result has the first
/// operand's dims, then the others'), reductions over the named dims the operand has.
tensor apply_operation(const std::string& op, const std::vector<tensor>& operands,
                       const std::vector<std::string>& dims);

} // namespace troupe::staged
