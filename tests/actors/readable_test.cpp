// Durations and sizes in messages read as people write them.
#include "troupe/actors/async_result.hpp"
#include "troupe/actors/detail/readable.hpp"
#include "troupe/actors/error.hpp"

#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
using troupe::detail::readable;
using troupe::detail::readable_bytes;

TEST(readable, durations_in_their_largest_unit_without_trailing_zeros) {
  EXPECT_EQ(readable(10ms), "10 ms");
  EXPECT_EQ(readable(1500ms), "1.5 s");
  EXPECT_EQ(readable(3s), "3 s");
  EXPECT_EQ(readable(3600s), "3600 s");
  EXPECT_EQ(readable(250us), "250 us");
  EXPECT_EQ(readable(1234567ns), "1.23 ms");
  EXPECT_EQ(readable(12ns), "12 ns");
  EXPECT_EQ(readable(0ms), "0 ns");
  EXPECT_EQ(readable(-20ms), "-20 ms");
  EXPECT_EQ(readable(std::chrono::duration<double, std::milli>{2.5}), "2.5 ms");
}

TEST(readable, sizes_in_binary_units) {
  EXPECT_EQ(readable_bytes(0), "0 bytes");
  EXPECT_EQ(readable_bytes(1), "1 byte");
  EXPECT_EQ(readable_bytes(512), "512 bytes");
  EXPECT_EQ(readable_bytes(1024), "1 KiB");
  EXPECT_EQ(readable_bytes(64ull << 20), "64 MiB");
  EXPECT_EQ(readable_bytes(3ull << 29), "1.5 GiB");
  EXPECT_EQ(readable_bytes(1ull << 30), "1 GiB");
  EXPECT_EQ(readable_bytes(5ull << 40), "5 TiB");
  EXPECT_EQ(readable_bytes(1ull << 60), "1048576 TiB");
  // Rounded, a size is followed by its exact count: 4,097 bytes must not read as 4 KiB.
  EXPECT_EQ(readable_bytes(4097), "4 KiB (4097 bytes)");
  EXPECT_EQ(readable_bytes(10'000), "9.77 KiB (10000 bytes)");
}

TEST(readable, a_result_not_ready_names_its_wait_as_written) {
  troupe::async_result<int> never{std::make_shared<troupe::detail::result_state<int>>()};
  try {
    never.get(10ms);
    ADD_FAILURE() << "no timeout";
  } catch (const troupe::timeout_error& e) {
    EXPECT_STREQ(e.what(), "result not ready after 10 ms");
  }
}

} // namespace
