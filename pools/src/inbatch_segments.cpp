#include "troupe/pools/detail/inbatch_batch_transfer.hpp"

namespace troupe::detail {

shm_segment inbatch_segments::take(std::size_t bytes) {
  {
    const std::lock_guard hold{lock_};
    if (kept_ && kept_->size() >= bytes) {
      auto segment = std::move(*kept_);
      kept_.reset();
      return segment;
    }
  }
  // Some headroom, so that a batch that grows a little between calls still fits.
  return shm_segment::create(bytes + bytes / 8);
}

void inbatch_segments::give_back(shm_segment segment) {
  const std::lock_guard hold{lock_};
  if (!kept_ || kept_->size() < segment.size())
    kept_.emplace(std::move(segment));
}

} // namespace troupe::detail
