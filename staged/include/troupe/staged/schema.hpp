// What a record holds (PhiML's dataclass): its data fields and its properties, each property a
// function of the record with its dependencies spelled out, and what it needs whole.
//
//   const auto spectra = troupe::staged::register_schema(
//     schema{"spectra"}
//       .field("signal")
//       .property({.name = "power", .field_deps = {"signal"}, .compute = power_of})
//       .property({.name = "mean_power", .property_deps = {"power"},
//                  .required_dims = dim_filter::all(), .compute = mean_of_power}));
//
// Schemas are registered by name at namespace scope, so that a process pool's workers, which
// run the same program, find the same one.
#pragma once

#include "troupe/staged/dims.hpp"
#include "troupe/staged/mixed.hpp"
#include "troupe/staged/tensor.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace troupe::staged {

class record;

/// What reading a property that is not computed yet does outside parallel_compute.
enum class direct_eval : std::uint8_t { raise, host_compute };

/// A property of a schema (a derived property, as PhiML has): its name, what it reads, the dims it
/// needs whole, and how it is computed.
struct property_spec {
  /// Its name, unique among the schema's fields and properties.
  std::string name;
  /// The fields compute reads: only these travel to the workers. A compute function is opaque
  /// to the plan: one that reads a field it does not declare fails when a slice runs, naming
  /// the field and the property (a MIXED expression's reads are declared for it).
  std::vector<std::string> field_deps;
  /// The properties compute reads, as field_deps.
  std::vector<std::string> property_deps;
  /// The dims it needs whole (PhiML's `requires`, a C++ keyword); the others among the
  /// parallel dims split it.
  dim_filter required_dims = dim_filter::none();
  /// The dims of the whole result, checked when it is stored (optional).
  std::optional<shape> out;
  /// Kept after parallel_compute even when not asked for, once computed.
  bool persistent = false;
  /// What reading it before it was computed does outside parallel_compute.
  direct_eval on_direct_eval = direct_eval::raise;
  /// Computes it from a record (a slice of one, on a worker): the fields and properties it declared
  /// are there.
  std::function<tensor(const record&)> compute;
  /// Instead of compute: an expression parallel_compute splits into an operation each
  /// (mixed.hpp); what it reads is added to the dependencies, and read directly it is
  /// evaluated whole.
  std::optional<expr> mixed;
};

/// A kind of record (PhiML's dataclass with derived properties): its fields and its properties.
/// Declared once, registered with register_schema so that worker processes know it.
class schema {
public:
  /// An empty schema named `name`.
  explicit schema(std::string name);

  /// invalid_argument for a name already used by a field or property.
  schema& field(std::string name);
  /// invalid_argument for a name already used, or not one of compute and mixed. Dependencies may
  /// name properties declared later; plan_compute checks them (invalid_plan for an unknown name
  /// or a circle).
  schema& property(property_spec spec);

  /// Its name.
  const std::string& name() const noexcept { return name_; }
  /// Its fields, in order of declaration.
  const std::vector<std::string>& fields() const noexcept { return fields_; }
  /// Whether it has a field named `name`.
  bool has_field(const std::string& name) const;
  /// Whether it has a property named `name`.
  bool has_property(const std::string& name) const;
  /// invalid_argument naming the property if there is none.
  const property_spec& property_of(const std::string& name) const;
  /// The fields a property reads, through the properties it reads.
  std::vector<std::string> field_closure(const std::string& property) const;

private:
  std::string name_;
  std::vector<std::string> fields_;
  std::map<std::string, property_spec> properties_;
};

/// Registers `s` under its name (invalid_argument if that name is taken) and returns it.
std::shared_ptr<const schema> register_schema(schema s);
/// invalid_argument if no schema of that name is registered in this program.
std::shared_ptr<const schema> find_schema(const std::string& name);

} // namespace troupe::staged
