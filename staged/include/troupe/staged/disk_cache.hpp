// parallel_compute's disk cache: with a memory_limit (and a cache_dir), each slice keeps in
// memory the smallest of its results that fit its share of the limit (the limit divided by the
// slices running at once) and writes the rest to one HDF5 file; the results come back as
// tensors that refer to their datasets and read them when read.
//
// Layout, for h5py or h5dump: <cache_dir>/s<stage>_i<slice>_<k>.h5, where k is the first number
// whose name is free (files are created exclusively and never overwritten or deleted; a rerun
// adds files). Each result is a dataset named after its property: 64-bit floats, the tensor's
// sizes, row-major, with a string attribute "dims" ("example:batch,x:spatial"). A file is
// written under "<name>.partial" and renamed when complete, so a slice that dies mid-write
// leaves no file that looks whole.
//
//   auto subscription = troupe::staged::on_load_into_memory([](const file_ref& f) { log(f); });
//   troupe::staged::set_cache_ttl(std::chrono::seconds{10});
//   for (const auto& file : troupe::staged::get_cache_files(r)) ...
#pragma once

#include "troupe/staged/record.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>

namespace troupe::staged {

/// Whether this build of troupe has the disk cache (configured with TROUPE_WITH_HDF5, on where
/// libhdf5-dev is installed). Without it parallel_compute refuses a memory_limit (invalid_plan).
bool disk_cache_available() noexcept;

/// Removes its callback when destroyed.
class load_subscription {
public:
  /// Made by on_load_into_memory.
  explicit load_subscription(std::size_t id) : id_(id) {}
  /// Takes over `other`'s callback.
  load_subscription(load_subscription&& other) noexcept : id_(std::exchange(other.id_, 0)) {}
  load_subscription& operator=(load_subscription&&) = delete;
  ~load_subscription();

private:
  std::size_t id_;
};

/// Calls `callback`, in this process, before each read of a dataset from disk (callbacks in the
/// order they were added).
[[nodiscard]] load_subscription on_load_into_memory(std::function<void(const file_ref&)> callback);

/// How long values read from disk stay in memory after their last read (2 s to start with):
/// a read within that time reuses them. nullopt: they go as soon as nothing holds them.
void set_cache_ttl(std::optional<std::chrono::duration<double>> ttl);

/// The files holding the values of a tensor, or of a record's fields and cached properties.
std::set<std::string> get_cache_files(const tensor& t);
std::set<std::string> get_cache_files(const record& r);

} // namespace troupe::staged
