// An instance of a schema (PhiML's dataclass instance): its fields' tensors, and the values of
// its properties once computed (cached, as a cached_property).
//
//   record r{spectra, {{"signal", signal}}};
//   parallel_compute(r, {"mean_power"});
//   r.get("mean_power");
//
// A record is not safe to use from several threads at once: reading a property may compute it.
#pragma once

#include "troupe/staged/schema.hpp"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace troupe::staged {

namespace detail {
struct record_access;
}

/// A record of a schema (a PhiML dataclass instance): its fields, and its properties once computed
/// (by parallel_compute, or on direct reading).
class record {
public:
  /// invalid_argument for a field the schema lacks, a field not given, or fields whose dims of
  /// one name differ.
  record(std::shared_ptr<const schema> definition, std::map<std::string, tensor> fields);

  /// Its schema.
  const schema& definition() const noexcept { return *schema_; }
  /// Its schema, shared.
  const std::shared_ptr<const schema>& definition_ptr() const noexcept { return schema_; }

  /// A field, or a property: its cached value, else computed if parallel_compute is running it
  /// or its on_direct_eval is host_compute, else non_parallel_access.
  const tensor& get(const std::string& name) const;
  /// Whether `property` has a value cached (in memory or on disk).
  bool is_cached(const std::string& property) const;
  /// The properties whose values are cached, by name.
  std::vector<std::string> cached() const;
  /// Stores a property's value, as if computed (parallel_compute then never computes it).
  void set_cached(const std::string& property, tensor value);
  /// Drops `property`'s cached value: it is computed again when needed.
  void forget(const std::string& property);

  /// Every field's dims, merged.
  shape dims() const;

  /// A record with `changes` to its fields, keeping every cached value whose fields (through the
  /// properties it reads) none of the changes touch.
  record replace(std::map<std::string, tensor> changes) const;
  /// replace({}): the same fields, every cached value kept.
  record copy() const { return replace({}); }

private:
  friend struct detail::record_access;
  record(std::shared_ptr<const schema> definition, std::map<std::string, tensor> fields,
         std::map<std::string, tensor> cached, bool computing);

  const tensor& computed(const property_spec& p) const;

  std::shared_ptr<const schema> schema_;
  std::map<std::string, tensor> fields_;
  mutable std::map<std::string, tensor> cache_;
  mutable std::set<std::string> in_progress_; // properties being computed: a circle is an error
  mutable const std::string* reading_ = nullptr; // the property being computed innermost
  bool computing_ = false; // a slice or host stage of parallel_compute: properties compute
  bool partial_ = false; // a slice: only the fields its stage reads
};

} // namespace troupe::staged
