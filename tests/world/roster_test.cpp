// A member reads rank 0's roster (world/src/roster.hpp) and indexes its tables by rank with it:
// a roster of another size than the world is refused, not written past.
#include "roster.hpp" // world/src

#include "troupe/actors/serialization.hpp"

#include <gtest/gtest.h>

#include <tuple>

namespace troupe::detail {
namespace {

using roster_tuple = std::tuple<std::vector<std::string>, std::vector<std::string>,
                                std::vector<std::uint16_t>, std::vector<std::vector<std::string>>,
                                std::vector<std::uint8_t>, std::string, std::uint32_t>;

constexpr auto lost = static_cast<std::uint8_t>(gone_as::lost);

TEST(roster, a_roster_of_the_worlds_size_is_read_whole) {
  const auto bytes = serialize(roster_tuple{
    {"a", "b"}, {"", "10.0.0.2"}, {0, 9100}, {{"cpu"}, {"cpu", "cuda:0"}}, {0, lost}, "w1", 2});
  const auto read = read_roster(bytes, 2);
  EXPECT_EQ(read.names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(read.hosts[1], "10.0.0.2");
  EXPECT_EQ(read.ports[1], 9100);
  EXPECT_EQ(read.devices[1], (std::vector<std::string>{"cpu", "cuda:0"}));
  EXPECT_EQ(read.gone, (std::vector<std::uint8_t>{0, lost})) << "member b is lost";
  EXPECT_EQ(read.world_id, "w1");
  EXPECT_EQ(read.incarnation, 2u);
}

TEST(roster, a_roster_of_another_size_is_a_serialization_error_naming_its_counts) {
  // Three hosts for a world of two: the member actor would write a third address past its table.
  const auto bytes =
    serialize(roster_tuple{{"a", "b"}, {"", "", ""}, {0, 1}, {{"cpu"}, {"cpu"}}, {0, 0}, "w", 1});
  try {
    (void)read_roster(bytes, 2);
    FAIL() << "a roster of three hosts was read for a world of two";
  } catch (const serialization_error& e) {
    EXPECT_NE(std::string{e.what()}.find("3 hosts"), std::string::npos) << e.what();
  }
  EXPECT_THROW(
    (void)read_roster(serialize(roster_tuple{{"a"}, {""}, {0}, {{"cpu"}}, {0}, "w", 1}), 2),
    serialization_error);
}

TEST(roster, a_gone_flag_that_means_nothing_is_a_serialization_error_naming_it) {
  const auto bytes =
    serialize(roster_tuple{{"a", "b"}, {"", ""}, {0, 1}, {{"cpu"}, {"cpu"}}, {0, 7}, "w", 1});
  try {
    (void)read_roster(bytes, 2);
    FAIL() << "a gone flag of 7 was read";
  } catch (const serialization_error& e) {
    EXPECT_NE(std::string{e.what()}.find("gone as 7"), std::string::npos) << e.what();
  }
}

TEST(roster, bytes_that_hold_no_roster_are_a_serialization_error) {
  const std::vector<std::byte> garbage(7, std::byte{0xff});
  EXPECT_THROW((void)read_roster(garbage, 2), serialization_error);
}

} // namespace
} // namespace troupe::detail
