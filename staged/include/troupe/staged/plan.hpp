// How parallel_compute will run (PhiML's stages), computed without running anything.
//
// Each property is distributed over the parallel dims the record has, less those it requires
// whole; none left means the host. Stages are built until every property is done: the
// candidates are the pending properties whose dependencies are each done or a candidate of the
// same distribution (so chains of equal distribution fuse into one stage), and the stage takes
// the candidates of the first candidate's distribution, in dependency-first order. A MIXED
// property is split into its operations first (mixed.hpp): an operation is distributed over
// the parallel dims its operands have, less those it reduces.
#pragma once

#include "troupe/staged/record.hpp"

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace troupe::staged {

/// How parallel_compute splits and keeps its work: the dims it cuts along, the workers, the memory
/// limit and the disk cache.
struct compute_options {
  /// The dims slices are cut along. Named dims must be the record's: a name it lacks is an
  /// invalid_argument naming it and the record's dims, unless ignore_unknown_parallel_dims asks
  /// for PhiML's silence (the name then splits nothing).
  dim_filter parallel_dims = dim_filter::kind(dim_kind::batch);
  /// Whether a parallel dim the record lacks is left alone (PhiML's silence) rather than refused.
  bool ignore_unknown_parallel_dims = false;
  /// At most this many slices at once, on a pool of any size; 0 runs every stage on the host.
  std::size_t max_workers = std::max(1u, std::thread::hardware_concurrency());
  /// Bytes of results the slices running at once keep in memory; the rest go to files in
  /// cache_dir (see disk_cache.hpp).
  std::optional<std::size_t> memory_limit;
  /// Where results over memory_limit go (HDF5 files); needed with a memory limit.
  std::optional<std::filesystem::path> cache_dir;
  /// Keep what earlier stages computed even when no later stage reads it.
  bool keep_intermediate = false;
};

/// A stage of a plan: properties computed together, split along the same dims.
struct stage {
  /// Computed here, dependencies first.
  std::vector<std::string> properties;
  /// The dims this stage is split along; none: it runs on the host.
  shape distributed;
  /// What each slice is sent: the fields its properties read, and the properties of earlier
  /// stages (or cached before the call) they read.
  std::vector<std::string> fields;
  /// The properties of earlier stages (or cached before the call) each slice is sent.
  std::vector<std::string> inputs;
  /// What comes back from the slices: the properties asked for, read later, or persistent.
  std::vector<std::string> returned;

  /// Whether it runs on the host (split along no dim).
  bool on_host() const noexcept { return distributed.rank() == 0; }
};

/// What parallel_compute does: its stages in order, and the operations MIXED properties became.
struct compute_plan {
  /// The stages, in the order they run.
  std::vector<stage> stages;
  /// The operations MIXED properties were split into, by name ("total_0_mul", ..., the last
  /// named as its property): the stages list them as they list properties.
  std::map<std::string, operation> operations;
  /// Slices at once: max_workers, at most the largest stage's slice count; 0 when every stage
  /// runs on the host.
  std::size_t workers = 0;
};

/// invalid_plan for an unknown property or field, properties that read each other in a circle,
/// or a memory_limit without a cache_dir.
compute_plan plan_compute(const record& r, const std::vector<std::string>& properties,
                          const compute_options& options = {});

} // namespace troupe::staged
