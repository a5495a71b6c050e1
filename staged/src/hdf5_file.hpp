// The disk cache's files (layout in disk_cache.hpp), through the HDF5 C library.
#pragma once

#include "troupe/staged/tensor.hpp"

#include <map>
#include <string>

namespace troupe::staged::detail {

/// Writes `values` into a new file of `folder` for slice `slice` of stage `stage` (made
/// exclusively; the folder is created if need be); returns its path.
std::string write_cache_file(const std::string& folder, std::size_t stage, std::size_t slice,
                             const std::map<std::string, tensor>& values);

/// The dataset `where`, which must have the sizes of `dims` (serialization_error naming the
/// file otherwise, or if it cannot be read).
xt::xarray<double> read_dataset(const file_ref& where, const shape& dims);

} // namespace troupe::staged::detail
