#include "troupe/queues/retain_memory.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "troupe/actors/error.hpp"

#include <malloc.h>

#include <string>

namespace troupe {

void retain_freed_memory(std::size_t largest_bytes) {
  constexpr std::size_t most = std::size_t{512} << 20; // twice it still fits mallopt's int
  if (largest_bytes == 0 || largest_bytes > most)
    throw invalid_argument("retain_freed_memory: " + std::to_string(largest_bytes) +
                           " bytes; give 1 byte to " + detail::readable_bytes(most));
  // Above the threshold malloc maps and unmaps; below, freed memory at the top of the heap is
  // trimmed only beyond the trim threshold, so it is kept at twice the largest allocation.
  const int threshold = static_cast<int>(largest_bytes + 1);
  if (mallopt(M_MMAP_THRESHOLD, threshold) != 1 || mallopt(M_TRIM_THRESHOLD, 2 * threshold) != 1)
    throw state_error("retain_freed_memory: the C library refused the malloc settings");
}

} // namespace troupe
