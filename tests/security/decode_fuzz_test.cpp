// Bytes from another process, mutated: the decoders of what members and workers send each other
// (a task's chunk of calls, a chunk's outcomes, a world's roster, an inbox message, tensors)
// either decode or throw serialization_error, and no input makes them hold more than a bounded
// amount of memory. 100,000 mutated inputs in the suite; TROUPE_FUZZ_ITERATIONS sets another
// count (ctest -C fuzz -L fuzz runs ten million).
#include "../allocation_counter.hpp"

#include "local_channel.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/actors/task.hpp"
#include "troupe/actors/tensor_serialization.hpp"

#include <gtest/gtest.h>
#include <xtensor/xarray.hpp>

#include <cstdlib>
#include <functional>
#include <random>
#include <tuple>

namespace troupe::testing {
namespace {

TROUPE_TASK(fuzz_scalar, [](int x) { return x + 1; });
TROUPE_TASK(fuzz_none, [] { return 7; });
TROUPE_TASK(fuzz_mixed, [](std::string s, std::vector<double> v) { return s.size() + v.size(); });
TROUPE_TASK(fuzz_tensor, [](xt::xarray<float> a) { return a.size(); });

using roster = std::tuple<std::vector<std::string>, std::vector<std::string>,
                          std::vector<std::uint16_t>, std::string>;

/// A decoder under test and a valid input to mutate.
struct target {
  const char* name;
  std::vector<std::byte> seed;
  std::function<void(std::span<const std::byte>)> decode;
};

std::function<void(std::span<const std::byte>)> invoker_of(const char* task) {
  const auto* invoke = troupe::detail::task_registry::instance().find(task);
  return [invoke](std::span<const std::byte> bytes) { (void)(*invoke)(bytes); };
}

template <class T>
std::function<void(std::span<const std::byte>)> decoder_of() {
  return [](std::span<const std::byte> bytes) { (void)troupe::deserialize<T>(bytes); };
}

std::vector<target> targets() {
  using namespace troupe::detail;
  local_message message;
  message.id = 42;
  message.from = 1;
  message.group = "g";
  message.key = "k";
  message.name = "fuzz_scalar";
  message.payload = {'a', 'b', 'c'};
  chunk_outcomes<int> outcomes{{1, 2, 3}, {call_failure{1, "std::out_of_range", "no"}}};
  return {
    {"task of one int", encode_calls(std::vector<std::tuple<int>>{{1}, {2}, {3}}),
     invoker_of("fuzz_scalar")},
    {"task without arguments", encode_calls(std::vector<std::tuple<>>(5)), invoker_of("fuzz_none")},
    {"task of a string and a vector",
     encode_calls(std::vector<std::tuple<std::string, std::vector<double>>>{{"ab", {1.0, 2.0}}}),
     invoker_of("fuzz_mixed")},
    {"task of a tensor",
     encode_calls(std::vector<std::tuple<xt::xarray<float>>>{{xt::xarray<float>{{1, 2}, {3, 4}}}}),
     invoker_of("fuzz_tensor")},
    {"chunk outcomes", serialize(outcomes), decoder_of<chunk_outcomes<int>>()},
    {"roster", serialize(roster{{"a", "b"}, {"", "10.0.0.2"}, {0, 9100}, "world"}),
     decoder_of<roster>()},
    {"inbox message", serialize(message), decoder_of<local_message>()},
  };
}

/// One mutation of `bytes`: flipped bytes, a length field set huge, bytes cut, inserted or
/// repeated.
std::vector<std::byte> mutate(std::vector<std::byte> bytes, std::mt19937_64& random) {
  const auto pick = [&](std::size_t n) { return n == 0 ? 0 : random() % n; };
  switch (random() % 5) {
  case 0:
    for (int i = 0, n = 1 + static_cast<int>(random() % 4); i < n && !bytes.empty(); ++i)
      bytes[pick(bytes.size())] ^= static_cast<std::byte>(1 + random() % 255);
    break;
  case 1: {
    const std::uint64_t huge = random() % 2 ? ~std::uint64_t{0} >> (random() % 40) : random();
    const auto at = pick(bytes.size());
    for (std::size_t i = 0; i < 8 && at + i < bytes.size(); ++i)
      bytes[at + i] = static_cast<std::byte>(huge >> (8 * i));
    break;
  }
  case 2: bytes.resize(pick(bytes.size() + 1)); break;
  case 3:
    bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(pick(bytes.size() + 1)),
                 static_cast<std::byte>(random()));
    break;
  default: {
    const auto from = pick(bytes.size());
    const auto length = pick(bytes.size() - from + 1);
    std::vector<std::byte> copy(bytes.begin() + static_cast<std::ptrdiff_t>(from),
                                bytes.begin() + static_cast<std::ptrdiff_t>(from + length));
    bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(pick(bytes.size() + 1)), copy.begin(),
                 copy.end());
  }
  }
  return bytes;
}

std::size_t iterations() {
  const char* wanted = std::getenv("TROUPE_FUZZ_ITERATIONS");
  return wanted != nullptr && *wanted ? std::strtoull(wanted, nullptr, 10) : 100'000;
}

TEST(decode_fuzz, mutated_inputs_decode_or_fail_as_serialization_errors_in_bounded_memory) {
  auto all = targets();
  std::mt19937_64 random{20261125};
  constexpr std::size_t memory_bound = 16 << 20; // inputs are at most a few hundred bytes
  std::size_t refused = 0;
  const auto count = iterations();
  for (std::size_t i = 0; i < count; ++i) {
    auto& t = all[i % all.size()];
    // Mutations build on mutations now and then, to reach deeper into the formats.
    auto input = mutate(t.seed, random);
    if (random() % 4 == 0)
      input = mutate(std::move(input), random);
    const auto before = live_bytes();
    reset_peak();
    try {
      t.decode(input);
    } catch (const troupe::serialization_error&) {
      ++refused;
    } catch (const std::exception& e) {
      FAIL() << t.name << ": input " << i << " threw " << typeid(e).name() << ": " << e.what();
    }
    ASSERT_LE(peak_bytes() - before, memory_bound)
      << t.name << ": input " << i << " of " << input.size() << " bytes";
  }
  EXPECT_GT(refused, count / 4) << "the mutations hardly reached the decoders' checks";
}

TEST(decode_fuzz, a_chunk_of_calls_without_arguments_cannot_ask_for_more_runs_than_its_bytes) {
  int runs = 0;
  const auto* invoke = troupe::detail::task_registry::instance().find("fuzz_none");
  ASSERT_NE(invoke, nullptr);
  // Eight bytes that once made a task without arguments run a hundred million times.
  const auto claim = troupe::serialize(std::uint64_t{100'000'000});
  EXPECT_THROW((*invoke)(claim), troupe::serialization_error);
  const auto five = troupe::detail::encode_calls(std::vector<std::tuple<>>(5));
  const auto outcomes = troupe::deserialize<troupe::detail::chunk_outcomes<int>>((*invoke)(five));
  runs = static_cast<int>(outcomes.first.size());
  EXPECT_EQ(runs, 5);
}

} // namespace
} // namespace troupe::testing
