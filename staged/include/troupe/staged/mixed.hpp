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

class expr {
public:
  /// A constant.
  expr(double value); // NOLINT: implicit, so that `x * 2.0` reads as it should
  static expr field(std::string name);
  static expr property(std::string name);

  friend expr operator+(const expr& a, const expr& b) { return binary("add", a, b); }
  friend expr operator-(const expr& a, const expr& b) { return binary("sub", a, b); }
  friend expr operator*(const expr& a, const expr& b) { return binary("mul", a, b); }
  friend expr operator/(const expr& a, const expr& b) { return binary("div", a, b); }
  friend expr operator-(const expr& a) { return unary("neg", a); }
  friend expr exp(const expr& a) { return unary("exp", a); }
  friend expr log(const expr& a) { return unary("log", a); }
  friend expr sqrt(const expr& a) { return unary("sqrt", a); }
  friend expr abs(const expr& a) { return unary("abs", a); }
  friend expr sum(const expr& a, std::vector<std::string> dims) {
    return reduction("sum", a, std::move(dims));
  }
  friend expr mean(const expr& a, std::vector<std::string> dims) {
    return reduction("mean", a, std::move(dims));
  }
  friend expr max(const expr& a, std::vector<std::string> dims) {
    return reduction("max", a, std::move(dims));
  }
  friend expr min(const expr& a, std::vector<std::string> dims) {
    return reduction("min", a, std::move(dims));
  }

  struct node;
  const node& root() const noexcept { return *root_; }

  /// The fields and properties it reads.
  std::vector<std::string> fields() const;
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

struct expr::node {
  enum class kind : std::uint8_t { constant, field, property, operation } what;
  std::string name; // a field or property; an operation's op ("mul", "sum", ...)
  double value = 0; // a constant
  std::vector<expr> operands;
  std::vector<std::string> dims; // a reduction's
};

/// One operation of a split MIXED property, as a plan names it: `op` of `operands` (names of
/// fields, properties or other operations, or constants), over `dims` for a reduction.
struct operation {
  struct operand {
    std::string name; // empty for a constant
    double value = 0;
    template <class Archive>
    void serialize(Archive& ar) {
      ar(name, value);
    }
  };
  std::string name, op;
  std::vector<operand> operands;
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
