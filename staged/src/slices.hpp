// A distributed stage's slices: cut from the record, run (on any pool, or here), and stacked
// back into the record.
#pragma once

#include "troupe/staged/plan.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace troupe::staged::detail {

using values = std::map<std::string, tensor>;

/// Where a slice writes the results that do not fit in memory (see disk_cache.hpp).
struct spill_rule {
  std::string folder;
  std::size_t limit = 0; // bytes of results the slice may keep in memory
  std::size_t stage = 0, slice = 0;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(folder, limit, stage, slice);
  }
};

/// One slice as it travels to a worker.
struct slice_job {
  std::string schema; // found by name in a worker process
  std::vector<std::string> compute, returned;
  values fields, inputs;
  std::vector<operation> operations; // of split MIXED properties, among `compute`
  std::optional<spill_rule> spill;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(schema, compute, returned, fields, inputs, operations, spill);
  }
};

/// Stage `k`'s slices of `r`, row-major over the stage's distributed dims.
std::vector<slice_job> cut_slices(const record& r, const compute_plan& plan, std::size_t k,
                                  const compute_options& options);
/// Computes a slice's properties and operations; returns those the stage returns.
values run_slice(std::shared_ptr<const schema> definition, const slice_job& job);
/// Computes `name` on `r`: an operation of `operations` if it is one, else a property.
void compute_node(const record& r, const std::string& name,
                  const std::map<std::string, operation>& operations);
/// Stacks each returned property over the slices and caches it in `r` (invalid_argument if a
/// declared out does not match).
void stack_into(record& r, const stage& st, const std::vector<values>& results);

} // namespace troupe::staged::detail
