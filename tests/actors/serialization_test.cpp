#include "troupe/actors/serialization.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

struct job_spec {
  int id = 0;
  std::string name;
  std::vector<double> params;
  std::optional<std::pair<int, std::string>> tag;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(id, name, params, tag);
  }
  bool operator==(const job_spec&) const = default;
};

template <class T>
T round_trip(const T& value) {
  return troupe::deserialize<T>(troupe::serialize(value));
}

template <class T>
void expect_round_trip(const T& value) {
  EXPECT_EQ(round_trip(value), value);
}

TEST(serialization, arithmetic_types_round_trip_at_their_limits) {
  expect_round_trip(true);
  expect_round_trip(false);
  expect_round_trip('x');
  expect_round_trip(std::numeric_limits<std::int8_t>::min());
  expect_round_trip(std::numeric_limits<std::uint16_t>::max());
  expect_round_trip(std::numeric_limits<std::int32_t>::min());
  expect_round_trip(std::numeric_limits<std::uint64_t>::max());
  expect_round_trip(std::numeric_limits<std::int64_t>::min());
  expect_round_trip(3.5f);
  expect_round_trip(-std::numeric_limits<double>::infinity());
  expect_round_trip(std::numeric_limits<double>::denorm_min());
  expect_round_trip(static_cast<long double>(1.25));
}

TEST(serialization, standard_containers_round_trip) {
  expect_round_trip(std::string{});
  expect_round_trip(std::string{"hello, \0 world", 14});
  expect_round_trip(std::vector<int>{});
  expect_round_trip(std::vector<int>{1, -2, 3});
  expect_round_trip(std::vector<bool>{true, false, true});
  expect_round_trip(std::vector<std::string>{"a", "", "ccc"});
  expect_round_trip(std::array<float, 3>{1.f, 2.f, 3.f});
  expect_round_trip(std::map<std::string, int>{{"a", 1}, {"b", 2}});
  expect_round_trip(std::unordered_map<int, std::vector<double>>{{1, {1.5}}, {2, {}}});
  expect_round_trip(std::tuple<int, std::string, double>{7, "seven", 7.0});
  expect_round_trip(std::pair<std::string, bool>{"flag", true});
  expect_round_trip(std::optional<int>{});
  expect_round_trip(std::optional<int>{42});
  expect_round_trip(
    std::vector<std::map<int, std::optional<std::string>>>{{{1, "x"}, {2, std::nullopt}}, {}});
}

TEST(serialization, user_types_with_a_serialize_member_round_trip) {
  expect_round_trip(job_spec{3, "train", {0.1, 0.2}, std::pair<int, std::string>{1, "gpu"}});
  expect_round_trip(std::vector<job_spec>{{}, {1, "a", {}, std::nullopt}});
}

TEST(serialization, a_blob_read_as_another_type_is_rejected_naming_the_type) {
  const auto bytes = troupe::serialize(1.5f);
  try {
    (void)troupe::deserialize<int>(bytes);
    FAIL() << "expected serialization_error";
  } catch (const troupe::serialization_error& e) {
    EXPECT_NE(std::string{e.what()}.find("int"), std::string::npos) << e.what();
    EXPECT_NE(std::string{e.what()}.find("another type"), std::string::npos) << e.what();
  }
  EXPECT_THROW(
    (void)troupe::deserialize<std::vector<float>>(troupe::serialize(std::vector<int>{1})),
    troupe::serialization_error);
}

TEST(serialization, every_truncation_of_a_valid_blob_is_rejected) {
  const auto bytes =
    troupe::serialize(job_spec{9, "name", {1, 2, 3}, std::pair<int, std::string>{4, "x"}});
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW((void)troupe::deserialize<job_spec>(std::span{bytes.data(), n}),
                 troupe::serialization_error)
      << "truncated to " << n << " of " << bytes.size() << " bytes";
}

TEST(serialization, trailing_bytes_are_rejected) {
  auto bytes = troupe::serialize(std::string{"abc"});
  bytes.push_back(std::byte{0});
  EXPECT_THROW((void)troupe::deserialize<std::string>(bytes), troupe::serialization_error);
}

TEST(serialization, every_single_bit_flip_of_a_valid_blob_is_rejected) {
  const auto bytes = troupe::serialize(std::map<std::string, std::vector<int>>{{"k", {1, 2}}});
  for (std::size_t i = 0; i < bytes.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      auto corrupted = bytes;
      corrupted[i] ^= std::byte{static_cast<unsigned char>(1u << bit)};
      EXPECT_THROW((void)(troupe::deserialize<std::map<std::string, std::vector<int>>>(corrupted)),
                   troupe::serialization_error)
        << "byte " << i << " bit " << bit;
    }
}

// Builds a blob around a hand-written payload, with a valid header and checksum, so the decoder
// itself (not the checksum) must defend against the payload.
template <class T>
std::vector<std::byte> forged_blob(const std::vector<std::byte>& payload) {
  std::vector<std::byte> blob(troupe::detail::blob_header_size + payload.size());
  std::copy(payload.begin(), payload.end(), blob.begin() + troupe::detail::blob_header_size);
  troupe::detail::seal(blob, troupe::detail::type_tag(typeid(T).name()));
  return blob;
}

std::vector<std::byte> u64_bytes(std::uint64_t v) {
  std::vector<std::byte> out(8);
  std::memcpy(out.data(), &v, 8);
  return out;
}

TEST(serialization, a_forged_length_of_10_to_the_15_is_rejected_before_allocating) {
  const auto blob = forged_blob<std::vector<double>>(u64_bytes(1'000'000'000'000'000ULL));
  try {
    (void)troupe::deserialize<std::vector<double>>(blob);
    FAIL() << "expected serialization_error";
  } catch (const troupe::serialization_error& e) {
    EXPECT_NE(std::string{e.what()}.find("1000000000000000"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)troupe::deserialize<std::string>(forged_blob<std::string>(u64_bytes(~0ULL))),
               troupe::serialization_error);
  EXPECT_THROW((void)(troupe::deserialize<std::map<int, int>>(
                 forged_blob<std::map<int, int>>(u64_bytes(1ULL << 50)))),
               troupe::serialization_error);
}

/// The peak resident memory `body` adds, measured in a forked child so that nothing the test
/// program did before counts; -1 if the child failed.
long peak_memory_added_kib(const std::function<void()>& body) {
  int fds[2];
  if (pipe(fds) != 0)
    return -1;
  const pid_t child = fork();
  if (child == 0) {
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    body();
    getrusage(RUSAGE_SELF, &after);
    const long added = after.ru_maxrss - before.ru_maxrss;
    (void)!write(fds[1], &added, sizeof added);
    _exit(0);
  }
  close(fds[1]);
  long added = -1;
  if (read(fds[0], &added, sizeof added) != sizeof added)
    added = -1;
  close(fds[0]);
  waitpid(child, nullptr, 0);
  return added;
}

template <class T>
void expect_refused_within_its_size(const std::vector<std::byte>& blob) {
  const auto added = peak_memory_added_kib([&] {
    try {
      (void)troupe::deserialize<T>(blob);
      std::fprintf(stderr, "a hostile blob decoded\n");
    } catch (const troupe::serialization_error&) {
    }
  });
  EXPECT_GE(added, 0) << "the decoding child failed";
  EXPECT_LT(added, 16 * 1024) << "a " << blob.size() << "-byte blob for "
                              << troupe::detail::type_name<T>() << " made the decoder allocate "
                              << added << " KiB";
  EXPECT_THROW((void)troupe::deserialize<T>(blob), troupe::serialization_error);
}

TEST(serialization, hostile_lengths_allocate_no_more_than_a_small_multiple_of_the_input) {
  // 2 KiB that claim 2000 elements of up to 1 MiB each (fewer elements than bytes, so a check
  // of one byte per element passes): a valid header and checksum, lying lengths.
  auto claim = [](std::uint64_t count) {
    std::vector<std::byte> bytes(2048, std::byte{0});
    std::memcpy(bytes.data(), &count, sizeof count);
    return bytes;
  };
  expect_refused_within_its_size<std::vector<std::array<float, 262144>>>(
    forged_blob<std::vector<std::array<float, 262144>>>(claim(2000)));
  expect_refused_within_its_size<std::vector<std::pair<std::array<double, 4096>, int>>>(
    forged_blob<std::vector<std::pair<std::array<double, 4096>, int>>>(claim(2000)));
  expect_refused_within_its_size<std::vector<std::vector<double>>>(
    forged_blob<std::vector<std::vector<double>>>(claim(2000)));
  expect_refused_within_its_size<std::vector<std::string>>(
    forged_blob<std::vector<std::string>>(claim(2000)));
  expect_refused_within_its_size<std::vector<std::tuple<std::array<std::int64_t, 1024>>>>(
    forged_blob<std::vector<std::tuple<std::array<std::int64_t, 1024>>>>(claim(2000)));
}

TEST(serialization, empty_vectors_of_numbers_round_trip) {
  EXPECT_TRUE(
    troupe::deserialize<std::vector<double>>(troupe::serialize(std::vector<double>{})).empty());
  const std::vector<std::vector<int>> nested{{}, {1}, {}};
  EXPECT_EQ(troupe::deserialize<std::vector<std::vector<int>>>(troupe::serialize(nested)), nested);
}

TEST(serialization, byte_vectors_travel_whole_as_count_then_bytes_and_round_trip) {
  std::vector<std::byte> bytes(100'000);
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<std::byte>(i * 7);
  const auto blob = troupe::serialize(bytes);
  ASSERT_EQ(blob.size(), troupe::detail::blob_header_size + 8 + bytes.size());
  EXPECT_EQ(
    std::memcmp(blob.data() + troupe::detail::blob_header_size + 8, bytes.data(), bytes.size()), 0);
  EXPECT_EQ(troupe::deserialize<std::vector<std::byte>>(blob), bytes);
  const std::vector<std::vector<std::byte>> nested{bytes, {}, {std::byte{1}}};
  EXPECT_EQ(troupe::deserialize<std::vector<std::vector<std::byte>>>(troupe::serialize(nested)),
            nested);
}

TEST(serialization, a_bool_byte_other_than_0_or_1_is_rejected) {
  EXPECT_THROW((void)troupe::deserialize<bool>(forged_blob<bool>({std::byte{7}})),
               troupe::serialization_error);
  EXPECT_TRUE(troupe::deserialize<bool>(forged_blob<bool>({std::byte{1}})));
}

TEST(serialization, randomized_values_round_trip) {
  std::mt19937_64 rng{20261122};
  using value = std::tuple<std::vector<std::int64_t>, std::map<std::string, double>,
                           std::optional<std::vector<std::string>>, std::array<std::uint8_t, 5>>;
  for (int round = 0; round < 300; ++round) {
    value v;
    std::uniform_int_distribution<int> len(0, 20);
    for (int i = len(rng); i > 0; --i)
      std::get<0>(v).push_back(static_cast<std::int64_t>(rng()));
    for (int i = len(rng); i > 0; --i)
      std::get<1>(v)[std::to_string(rng() % 1000)] =
        std::uniform_real_distribution<double>(-1e9, 1e9)(rng);
    if (rng() % 2) {
      std::vector<std::string> strings;
      for (int i = len(rng); i > 0; --i)
        strings.emplace_back(static_cast<std::size_t>(len(rng)),
                             static_cast<char>('a' + rng() % 26));
      std::get<2>(v) = strings;
    }
    for (auto& b : std::get<3>(v))
      b = static_cast<std::uint8_t>(rng());
    ASSERT_EQ(round_trip(v), v) << "round " << round;
  }
}

TEST(serialization, random_corruption_never_crashes_and_is_always_detected) {
  std::mt19937_64 rng{7};
  const auto valid = troupe::serialize(std::vector<job_spec>{
    {1, "one", {1.0}, std::nullopt}, {2, "two", {}, std::pair<int, std::string>{2, "b"}}});
  for (int round = 0; round < 2000; ++round) {
    auto bytes = valid;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f)
      bytes[rng() % bytes.size()] ^= std::byte{static_cast<unsigned char>(1 + rng() % 255)};
    if (rng() % 3 == 0)
      bytes.resize(rng() % bytes.size());
    if (bytes == valid)
      continue; // two flips of the same byte cancelled out
    EXPECT_THROW((void)troupe::deserialize<std::vector<job_spec>>(bytes),
                 troupe::serialization_error)
      << "round " << round;
  }
}

} // namespace
