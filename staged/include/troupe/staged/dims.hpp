// Named dimensions (PhiML's shapes): every axis of a staged tensor has a name, a kind and a
// size, so a computation is split and stacked by name, never by position.
//
//   auto s = troupe::staged::shape{batch("example", 2), spatial("x", 3)};
//   s.only(dim_filter::kind(dim_kind::batch));   // (example=2)
//   s.volume();                                  // 6
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace troupe::staged {

enum class dim_kind : std::uint8_t { batch, spatial, channel, instance, dual };
const char* kind_name(dim_kind k) noexcept;

/// A named dim of a tensor: PhiML's dimension, with its kind and size.
struct dim {
  /// Its name, unique in a shape.
  std::string name;
  /// Batch, spatial, channel, ...: what parallel_compute may split along.
  dim_kind kind = dim_kind::batch;
  /// Its extent.
  std::size_t size = 0;
  /// The same name, kind and size.
  bool operator==(const dim&) const = default;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(name, kind, size);
  }
};

dim batch(std::string name, std::size_t size);
dim spatial(std::string name, std::size_t size);
dim channel(std::string name, std::size_t size);
dim instance(std::string name, std::size_t size);
dim dual(std::string name, std::size_t size);

class shape;

/// Which dims a property needs whole (`requires`), or which dims a computation splits along
/// (`parallel_dims`): none (fully parallel), all (the host), dims of one kind, or named dims.
class dim_filter {
public:
  /// Selects no dim.
  static dim_filter none();
  /// Selects every dim.
  static dim_filter all();
  /// Selects the dims of kind `k`.
  static dim_filter kind(dim_kind k);
  /// Selects the dims named.
  static dim_filter names(std::vector<std::string> names);

  /// Whether it selects `d`.
  bool selects(const dim& d) const;
  /// The names it was made of (names()); empty for the other filters.
  const std::vector<std::string>& named() const noexcept { return names_; }

private:
  enum class by : std::uint8_t { none, all, kind, names };
  dim_filter(by how, dim_kind k, std::vector<std::string> names)
    : how_(how), kind_(k), names_(std::move(names)) {}
  by how_;
  dim_kind kind_;
  std::vector<std::string> names_;
};

/// Dims in order, each name once. invalid_argument names a repeated dim.
class shape {
public:
  shape() = default;
  /// A shape of these dims, in order; invalid_argument if two share a name.
  shape(std::initializer_list<dim> dims);
  /// A shape of these dims, in order; invalid_argument if two share a name.
  explicit shape(std::vector<dim> dims);

  /// Its dims, in order.
  const std::vector<dim>& dims() const noexcept { return dims_; }
  /// How many dims it has.
  std::size_t rank() const noexcept { return dims_.size(); }
  /// Whether it has a dim named `name`.
  bool contains(const std::string& name) const;
  /// invalid_argument naming the dim if this shape has none of that name.
  const dim& at(const std::string& name) const;
  /// The position of the dim named `name`; invalid_argument naming the dims there are when none is.
  std::size_t index_of(const std::string& name) const;
  /// The product of the sizes (1 for no dims).
  std::size_t volume() const;
  /// Each dim's size, in order.
  std::vector<std::size_t> sizes() const;
  /// Each dim's name, in order.
  std::vector<std::string> names() const;

  /// The dims `filter` selects, in order.
  shape only(const dim_filter& filter) const;
  /// The dims `filter` does not select, in order.
  shape without(const dim_filter& filter) const;
  /// This shape's dims, then those of `other` it lacks; invalid_argument if a dim of both names
  /// differs in size or kind.
  shape merged(const shape& other) const;

  /// The same dims, in any order.
  bool equivalent(const shape& other) const;
  /// "(example=2 batch, x=3 spatial)".
  std::string describe() const;
  /// The same dims in the same order.
  bool operator==(const shape&) const = default;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(dims_);
  }

private:
  std::vector<dim> dims_;
};

} // namespace troupe::staged
