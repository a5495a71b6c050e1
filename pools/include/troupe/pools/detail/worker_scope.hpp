// Which worker the calling thread is (this_worker.hpp), as the pools' workers set it.
#pragma once

#include "troupe/pools/this_worker.hpp"

#include <cstddef>
#include <optional>

namespace troupe::detail {

/// Makes `index` the calling thread's worker for its lifetime (set by the pools' workers).
class worker_scope {
public:
  explicit worker_scope(std::size_t index) noexcept;
  ~worker_scope();
  worker_scope(const worker_scope&) = delete;
  worker_scope& operator=(const worker_scope&) = delete;

private:
  std::optional<worker_identity> previous_;
};

} // namespace troupe::detail
