#include "allocation_counter.hpp"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace troupe::testing {
namespace {

constexpr std::size_t large = 64 * 1024;
std::atomic<std::size_t> live{0};
std::atomic<std::size_t> peak{0};
std::atomic<std::size_t> large_count{0};

void counted(void* p, std::size_t requested) noexcept {
  const auto now =
    live.fetch_add(malloc_usable_size(p), std::memory_order_relaxed) + malloc_usable_size(p);
  auto seen = peak.load(std::memory_order_relaxed);
  while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
  if (requested >= large)
    large_count.fetch_add(1, std::memory_order_relaxed);
}

} // namespace

std::size_t live_bytes() noexcept { return live.load(); }
std::size_t peak_bytes() noexcept { return peak.load(); }
std::size_t large_allocations() noexcept { return large_count.load(); }
void reset_peak() noexcept {
  peak.store(live.load());
  large_count.store(0);
}

} // namespace troupe::testing

// The replaceable forms the others default to (new[], nothrow new and sized delete call these).
void* operator new(std::size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr)
    throw std::bad_alloc{};
  troupe::testing::counted(p, size);
  return p;
}

void operator delete(void* p) noexcept {
  if (p == nullptr)
    return;
  troupe::testing::live.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
  std::free(p);
}

void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
