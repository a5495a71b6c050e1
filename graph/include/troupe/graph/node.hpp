// Array expressions as an immutable DAG (pytato's arrays): each node is a computation on its
// children, compared and hashed by structure (tags included), never by address, so two equal
// graphs built apart are equal, and orders taken from them are the same in every process.
//
//   auto x = troupe::graph::placeholder("x", {3});
//   auto y = 2.0 * x + troupe::graph::reduce(x, {0}, "sum");
//   auto out = troupe::graph::make_outputs({{"y", y}});
//   auto values = troupe::graph::evaluate(out, {{"x", xt::xarray<double>{1, 2, 3}}});
//
// A dimension may be a size parameter's (pytato's SizeParam in a shape): `auto n =
// size_param("n"); placeholder("a", {extent(n), 3})`. Such a dimension is a negative number in
// shape(), the same for every use of that parameter (in every process), so shapes compare and
// broadcast as they should; the placeholder reads the parameter (it is its child), and
// evaluate binds it from the inputs.
#pragma once

#include <xtensor/xarray.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace troupe::graph {

enum class kind : std::uint8_t {
  placeholder, // a named input array
  size_param, // a named integer input (a scalar)
  data, // an array held in the graph
  elementwise, // name(): add sub mul div pow max min neg exp log sqrt abs
  reduce, // name(): sum prod max min, over ints() axes
  stack, // children along new axis ints()[0]
  concatenate, // children along axis ints()[0]
  reshape, // to shape()
  transpose, // axes permuted as ints()
  roll, // by ints()[0] along axis ints()[1]
  einsum, // name(): the subscripts, "ij,jk->ik"
  outputs, // named results: names(), children in name order (pytato's DictOfNamedArrays)
  send, // children (stapled_to, data): data goes to rank ints()[0] under tag name(); the
        // node's value is stapled_to's (pytato's DistributedSendRefHolder)
  recv, // an array that comes from rank ints()[0] under tag name()
  index, // numpy's indexing: ints() holds four per index (graph/src/indexing.hpp); children:
         // the array, then its index arrays
};
const char* kind_name(kind k) noexcept;

enum class dtype : std::uint8_t { float64, float32 };
using shape_t = std::vector<std::int64_t>;

class node;
using node_ptr = std::shared_ptr<const node>;

/// What a node is apart from its children. A node's copies with other children (with_children,
/// what every rewriting pass makes) share it, so they copy no name, shape or tags.
struct node_fields {
  /// The node's kind.
  kind what;
  /// A placeholder's, size parameter's or data node's name; empty for the others.
  std::string name;
  /// Its shape: one extent an axis.
  shape_t shape;
  /// Its element type.
  dtype type = dtype::float64;
  /// The kind's integer arguments (axes, shifts, a reshape's extents, ...).
  std::vector<std::int64_t> ints;
  /// The kind's names (an elementwise operation's, einsum's subscripts, a send's tag, ...).
  std::vector<std::string> names;
  /// A data node's values.
  std::shared_ptr<const xt::xarray<double>> data;
  /// Tags (pytato's): names a pass may attach and match on.
  std::set<std::string> tags;
  std::size_t hash = 0; ///< of the fields above, set when a node is made of them

  /// Equal kind, fields and tags (the hash first).
  bool operator==(const node_fields& other) const;
};

/// A node of an array-expression DAG (pytato's Array): immutable and shared, equal to another of
/// the same structure. Made by the builders below (placeholder, reduce, roll, ...).
class node {
  struct sharing {}; // only a node makes another of its fields (their hash is already set)

public:
  /// Builds a node; the builders below check their arguments and are what to call.
  node(node_fields fields, std::vector<node_ptr> children);
  /// A node with the fields of another (what with_children makes).
  node(sharing, std::shared_ptr<const node_fields> fields, std::vector<node_ptr> children);
  /// Releases the children without recursion: the last reference to a chain of a million nodes
  /// is dropped in a loop, not a million nested destructors.
  ~node();
  node(const node&) = delete;
  node& operator=(const node&) = delete;

  /// Its kind.
  kind what() const noexcept { return fields_->what; }
  /// Its name (placeholders, size parameters and data).
  const std::string& name() const noexcept { return fields_->name; }
  /// Its operands, in a fixed order: every walk is deterministic.
  const std::vector<node_ptr>& children() const noexcept { return children_; }
  /// Its shape.
  const shape_t& shape() const noexcept { return fields_->shape; }
  /// Its element type.
  dtype type() const noexcept { return fields_->type; }
  /// Its kind's integer arguments.
  const std::vector<std::int64_t>& ints() const noexcept { return fields_->ints; }
  /// outputs: the result names, in the order of children().
  const std::vector<std::string>& names() const noexcept { return fields_->names; }
  /// A data node's values.
  const std::shared_ptr<const xt::xarray<double>>& data() const noexcept { return fields_->data; }
  /// Its tags.
  const std::set<std::string>& tags() const noexcept { return fields_->tags; }
  /// Its elements: the product of its shape.
  std::int64_t size() const noexcept;

  /// Structural: kind, fields, tags and children, recursively (children compared by address
  /// first). The hash is computed once, from the same, and is the same in every process.
  std::size_t hash() const noexcept { return hash_; }
  /// Equal in structure (hash(), and the same, recursively).
  bool operator==(const node& other) const;

  /// This node with other children (the same kind, fields and tags).
  node_ptr with_children(std::vector<node_ptr> children) const;
  /// This node with `tag` added.
  node_ptr with_tag(std::string tag) const;

private:
  std::shared_ptr<const node_fields> fields_;
  std::vector<node_ptr> children_;
  std::size_t hash_;
};

/// Placeholders, size parameters and data: what a computation starts from.
bool is_input(const node& n) noexcept;

/// Hash and equality of node_ptr by structure, for unordered containers.
struct node_hash {
  /// The node's structural hash.
  std::size_t operator()(const node_ptr& n) const noexcept { return n->hash(); }
};
/// Equality of node_ptr by structure, for unordered containers.
struct node_equal {
  /// Whether `a` and `b` are the same node, or equal in structure.
  bool operator()(const node_ptr& a, const node_ptr& b) const { return a == b || *a == *b; }
};
using node_set = std::unordered_set<node_ptr, node_hash, node_equal>;
template <class V>
using node_map = std::unordered_map<node_ptr, V, node_hash, node_equal>;

// Builders. Shapes broadcast as numpy's do for element-wise operations; a bad shape, axis or
// subscript is invalid_argument naming it.
node_ptr placeholder(std::string name, shape_t shape, dtype type = dtype::float64);
node_ptr size_param(std::string name);
/// The dimension a size parameter stands for, for a placeholder's shape (invalid_argument if
/// `size_parameter` is not one).
std::int64_t extent(const node_ptr& size_parameter);
/// Whether a dimension of a shape is a size parameter's, and the parameter's name.
constexpr bool is_symbolic(std::int64_t dimension) noexcept { return dimension < 0; }
std::string symbol_name(std::int64_t dimension);
/// "(n, 3)".
std::string describe(const shape_t& shape);
node_ptr data(xt::xarray<double> values, dtype type = dtype::float64);
node_ptr constant(double value);
node_ptr elementwise(std::string op, std::vector<node_ptr> operands);
node_ptr reduce(node_ptr x, std::vector<std::int64_t> axes, std::string op = "sum");
node_ptr stack(std::vector<node_ptr> arrays, std::int64_t axis = 0);
node_ptr concatenate(std::vector<node_ptr> arrays, std::int64_t axis = 0);
/// One dimension may be -1, as in numpy: the size that keeps the element count.
node_ptr reshape(node_ptr x, shape_t shape);
node_ptr transpose(node_ptr x, std::vector<std::int64_t> axes = {});
node_ptr roll(node_ptr x, std::int64_t shift, std::int64_t axis);
node_ptr einsum(std::string subscripts, std::vector<node_ptr> operands);
/// One index of index(), as numpy's: an integer (a negative one counts from the end), a slice
/// start:stop:step (either end left out as nullopt), a new axis of size 1, or an array whose
/// elements are whole numbers (advanced indexing).
struct index_entry {
  /// What an entry is.
  enum class what : std::uint8_t { integer, slice, new_axis, array };
  /// This entry's kind.
  what kind = what::slice;
  std::int64_t value = 0; ///< an integer's
  /// A slice's start (nullopt: from the start).
  std::optional<std::int64_t> start;
  /// A slice's stop (nullopt: to the end).
  std::optional<std::int64_t> stop;
  /// A slice's step.
  std::int64_t step = 1;
  node_ptr indices; ///< an array's
};
index_entry index_at(std::int64_t i);
index_entry index_slice(std::optional<std::int64_t> start = std::nullopt,
                        std::optional<std::int64_t> stop = std::nullopt, std::int64_t step = 1);
index_entry index_newaxis();
index_entry index_array(node_ptr indices);
/// x[entries...], numpy's indexing: `index(x, {index_at(-1), index_slice(1, {}, 2)})` is
/// x[-1, 1::2], `index(x, {index_slice(), index_array(rows)})` is x[:, rows]; axes the entries
/// do not reach are kept whole. With index arrays, they and the integers are advanced indices:
/// their broadcast shape stands where they stand together, else first, as in numpy. An integer
/// out of range, a step of 0, more entries than axes, an indexed size parameter's axis, or
/// index arrays that do not broadcast are invalid_argument; so is, when evaluated, an index
/// array element that is not a whole number within its axis.
node_ptr index(node_ptr x, std::vector<index_entry> entries);
/// An einsum's subscripts, "ij,jk->ik": the inputs' ("ij", "jk") and the output's ("ik").
std::pair<std::vector<std::string>, std::string> einsum_subscripts(const std::string& spec);

/// An array rank `src_rank` sends under `tag`, of the shape and type it declares.
node_ptr make_distributed_recv(int src_rank, std::string tag, shape_t shape,
                               dtype type = dtype::float64);
/// `stapled_to`, carrying along the send of `data` to rank `dest_rank` under `tag`: the send
/// stays in the DAG as long as the value is used.
node_ptr staple_distributed_send(node_ptr data, int dest_rank, std::string tag,
                                 node_ptr stapled_to);

/// The named results of a graph.
node_ptr make_outputs(const std::map<std::string, node_ptr>& named);

node_ptr operator+(const node_ptr& a, const node_ptr& b);
node_ptr operator-(const node_ptr& a, const node_ptr& b);
node_ptr operator*(const node_ptr& a, const node_ptr& b);
node_ptr operator/(const node_ptr& a, const node_ptr& b);
node_ptr operator-(const node_ptr& a);
node_ptr operator+(const node_ptr& a, double b);
node_ptr operator*(double a, const node_ptr& b);
node_ptr operator*(const node_ptr& a, double b);

} // namespace troupe::graph
