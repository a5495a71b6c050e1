// The disk cache's files in a build of troupe without HDF5 (TROUPE_WITH_HDF5 off): plan_compute
// refuses a memory_limit before any slice runs, so nothing reaches these but a caller that skips
// the plan; it is told the same.
#include "hdf5_file.hpp"

#include "troupe/staged/disk_cache.hpp"

#include "troupe/staged/errors.hpp"

namespace troupe::staged::detail {

namespace {

[[noreturn]] void no_disk_cache() {
  throw invalid_plan("parallel_compute: this build of troupe has no disk cache (configure it with "
                     "TROUPE_WITH_HDF5=ON, which needs libhdf5-dev)");
}

} // namespace

std::string write_cache_file(const std::string&, std::size_t, std::size_t,
                             const std::map<std::string, tensor>&) {
  no_disk_cache();
}

xt::xarray<double> read_dataset(const file_ref&, const shape&) { no_disk_cache(); }

} // namespace troupe::staged::detail

namespace troupe::staged {

bool disk_cache_available() noexcept { return false; }

} // namespace troupe::staged
