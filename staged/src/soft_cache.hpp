// Values read from disk, kept for the time to live after their last read (PhiML's SoftCache):
// a weak reference while anyone holds them, a strong one until they expire, dropped by a
// cleaner thread every half time to live.
#pragma once

#include "troupe/staged/tensor.hpp"

#include <memory>

namespace troupe::staged::detail {

/// The values of dataset `where` (of `dims`): cached, else read, the on-load callbacks first.
std::shared_ptr<const xt::xarray<double>> load_cached(const file_ref& where, const shape& dims);

} // namespace troupe::staged::detail
