// retain_freed_memory: large allocations stay with the process once freed (each test is a
// process of its own under ctest, so the malloc settings do not leak into others).
#include "troupe/queues/retain_memory.hpp"

#include "troupe/actors/error.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstddef>
#include <memory>
#include <string>

namespace {

constexpr std::size_t mib = std::size_t{1} << 20;

/// Allocates and frees `bytes`, touching every page; returns the free bytes malloc then holds.
std::size_t free_bytes_held_after_a_round_trip(std::size_t bytes) {
  {
    auto block = std::make_unique<std::byte[]>(bytes); // zeroed: every page touched
    block[bytes - 1] = std::byte{1};
  }
  return mallinfo2().fordblks;
}

TEST(retain_freed_memory, a_freed_64_mib_block_stays_with_the_process) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "needs glibc's malloc, which ThreadSanitizer replaces with its own";
#endif
  EXPECT_LT(free_bytes_held_after_a_round_trip(64 * mib), 64 * mib)
    << "by default glibc gives a block this large back to the kernel";
  troupe::retain_freed_memory(256 * mib);
  EXPECT_GE(free_bytes_held_after_a_round_trip(64 * mib), 64 * mib)
    << "the freed block went back to the kernel";
}

TEST(retain_freed_memory, sizes_out_of_range_are_refused_naming_them) {
  for (const std::size_t bytes : {std::size_t{0}, 513 * mib}) {
    try {
      troupe::retain_freed_memory(bytes);
      ADD_FAILURE() << bytes << " was accepted";
    } catch (const troupe::invalid_argument& e) {
      EXPECT_NE(std::string{e.what()}.find(std::to_string(bytes)), std::string::npos) << e.what();
    }
  }
}

} // namespace
