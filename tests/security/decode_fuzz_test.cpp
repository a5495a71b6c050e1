// Bytes from another process, mutated: the decoders of what members and workers send each other
// (a task's chunk of calls, a chunk's outcomes, a world's roster and a joiner's devices, an inbox
// message, tensors; an actor's spawn request, a call to it from another member and its answer,
// a name lookup's answer, a call a worker process relays, a handle that travelled) either decode
// or throw a typed error (serialization_error, or the one the target names), and no input makes
// them hold more than a bounded amount of memory. 100,000 mutated inputs in the suite, spread
// over the targets; TROUPE_FUZZ_ITERATIONS sets another count (ctest -C fuzz -L fuzz runs ten
// million).
#include "../allocation_counter.hpp"

#include "actor_wire.hpp"
#include "local_channel.hpp"
#include "process/worker_wire.hpp"
#include "roster.hpp"
#include "world_core.hpp"

#include "troupe/actors/actor.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/task.hpp"
#include "troupe/actors/tensor_serialization.hpp"
#include "troupe/world/detail/group_calls.hpp"

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

/// An actor another member spawns, calls and looks up, and whose handle travels.
struct fuzz_actor {
  explicit fuzz_actor(std::string label) : label(std::move(label)) {}
  std::string tag(std::string s, std::vector<double> v) {
    return label + s + std::to_string(v.size());
  }
  std::string label;
};
TROUPE_ACTOR(fuzz_actor, std::string, &fuzz_actor::tag);

/// Whether an error a decoder threw is one its target may throw; serialization_error always is.
using accepted = std::function<bool(const std::exception&)>;

/// A decoder under test and a valid input to mutate.
struct target {
  const char* name;
  std::vector<std::byte> seed;
  std::function<void(std::span<const std::byte>)> decode;
  accepted also = [](const std::exception&) { return false; };
};

/// An exception rebuilt from what the bytes name: the peer's to choose, so any is fair.
bool rebuilt(const std::exception& e) { return troupe::origin_of(e) != nullptr; }

template <class E>
bool is(const std::exception& e) {
  return dynamic_cast<const E*>(&e) != nullptr;
}

const std::string tag_key = troupe::detail::method_key<fuzz_actor>(&fuzz_actor::tag);
const std::string fuzz_type = troupe::detail::actor_type_key<fuzz_actor>();

/// The object another member's calls run on.
fuzz_actor& hosted_object() {
  static fuzz_actor object{"here"};
  return object;
}

std::vector<std::byte> tag_arguments() {
  return troupe::detail::encode_calls(
    std::vector<std::tuple<std::string, std::vector<double>>>{{"ab", {1.0, 2.0}}});
}

/// A spawn request, and the object its constructor's bytes make.
target actor_spawn_target() {
  using namespace troupe::detail;
  return {"actor spawn request",
          serialize(
            actor_spawn_request{encode_constructor<fuzz_actor>(std::string{"x"}), 64, -1, true, 2}),
          [](std::span<const std::byte> bytes) {
            const auto request = deserialize<actor_spawn_request>(bytes);
            const auto* make = task_registry::instance().find_context_type(fuzz_type);
            (void)(*make)(request.constructor);
          }};
}

/// A call from another member: its envelope, then its arguments as the method's preparer
/// decodes them on arrival, then the call run on the hosted object.
target actor_call_target() {
  using namespace troupe::detail;
  return {"actor call from another member",
          serialize(actor_call_envelope{7, 3, 1, tag_arguments()}),
          [](std::span<const std::byte> bytes) {
            const auto envelope = deserialize<actor_call_envelope>(bytes);
            const auto* prepare = task_registry::instance().find_call_preparer(tag_key);
            const auto prepared = (*prepare)(envelope.arguments);
            (void)prepared (&hosted_object())();
          }};
}

/// An actor call's answer, settled into the caller's result as world_actor.cpp does.
target actor_answer_target() {
  using namespace troupe::detail;
  chunk_outcomes<std::string> outcome;
  outcome.first.push_back("tagged");
  return {"actor call's answer", serialize(actor_reply{std::nullopt, serialize(outcome)}),
          [](std::span<const std::byte> bytes) {
            auto result = std::make_shared<result_state<std::string>>();
            using method = decltype(&fuzz_actor::tag);
            typed_actor_call<fuzz_actor, method> call{&fuzz_actor::tag, result,
                                                      std::make_shared<const std::string>("fuzzed"),
                                                      std::string{}, std::vector<double>{}};
            const auto answer = deserialize<actor_reply>(bytes);
            if (answer.failure)
              call.fail(answer.failure->why.exception("peer"));
            else
              call.settle(answer.outcomes, "peer");
            (void)result->value(); // what the caller's get() gives or throws
          },
          rebuilt};
}

/// A name lookup's answer (actor_resolve), as found_at decodes it.
target actor_found_target() {
  using namespace troupe::detail;
  chunk_outcomes<actor_found> found;
  found.first.push_back({42, true, 3});
  return {
    "name lookup's answer", serialize(found),
    [](std::span<const std::byte> bytes) { (void)decode_outcome<actor_found>(bytes, "member 2"); },
    rebuilt};
}

/// A worker's reply batch with a call it relays to an actor here, decoded and run as
/// relay_host.cpp runs it on the actor's object.
target relayed_call_target() {
  using namespace troupe::detail;
  reply_batch batch;
  batch.chunks.push_back({1, {}, {std::byte{1}, std::byte{2}}});
  batch.relayed.push_back({5, 1, tag_key, tag_arguments()});
  return {"call relayed from a worker process", serialize(batch),
          [](std::span<const std::byte> bytes) {
            const auto decoded = deserialize<reply_batch>(bytes);
            for (const auto& relayed : decoded.relayed)
              if (const auto* run = task_registry::instance().find_context_task(relayed.method))
                (void)(*run)(&hosted_object(), relayed.arguments);
          }};
}

/// A joining member's devices, as rank 0 reads and checks them.
/// Rank 0's roster, as a joiner of a world of up to two reads it.
target roster_target() {
  using namespace troupe::detail;
  return {"roster",
          encode_roster({{"a", "b"},
                         {"", "10.0.0.2"},
                         {0, 9100},
                         {{"cpu"}, {"cpu", "cuda:0"}},
                         {0, static_cast<std::uint8_t>(gone_as::lost)},
                         "w",
                         2}),
          [](std::span<const std::byte> bytes) { (void)read_roster(bytes, 2); }};
}

target joined_devices_target() {
  using namespace troupe::detail;
  return {"join's device list", serialize(std::vector<std::string>{"cpu", "cuda:0", "cuda:1"}),
          [](std::span<const std::byte> bytes) {
            check_devices(deserialize<std::vector<std::string>>(bytes), "the joiner's devices");
          },
          is<troupe::invalid_argument>};
}

/// A handle to an actor of this process that travelled out and came back.
target travelled_handle_target(const troupe::actor<fuzz_actor>& here) {
  return {"travelled handle", troupe::serialize(here),
          [](std::span<const std::byte> bytes) {
            (void)troupe::deserialize<troupe::actor<fuzz_actor>>(bytes);
          },
          is<troupe::actor_stopped>};
}

std::function<void(std::span<const std::byte>)> invoker_of(const char* task) {
  const auto* invoke = troupe::detail::task_registry::instance().find(task);
  return [invoke](std::span<const std::byte> bytes) { (void)(*invoke)(bytes); };
}

template <class T>
std::function<void(std::span<const std::byte>)> decoder_of() {
  return [](std::span<const std::byte> bytes) { (void)troupe::deserialize<T>(bytes); };
}

std::vector<target> targets(const troupe::actor<fuzz_actor>& here) {
  using namespace troupe::detail;
  local_message message;
  message.id = 42;
  message.from = 1;
  message.group = "g";
  message.key = "k";
  message.name = "fuzz_scalar";
  message.payload = {'a', 'b', 'c'};
  chunk_outcomes<int> outcomes{{1, 2, 3}, {call_failure{1, {"std::out_of_range", "no"}}}};
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
    roster_target(),
    {"inbox message", serialize(message), decoder_of<local_message>()},
    actor_spawn_target(),
    actor_call_target(),
    actor_answer_target(),
    actor_found_target(),
    relayed_call_target(),
    joined_devices_target(),
    travelled_handle_target(here),
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

TEST(decode_fuzz, mutated_inputs_decode_or_fail_with_typed_errors_in_bounded_memory) {
  troupe::runtime rt;
  const auto here = troupe::spawn<fuzz_actor>(rt, {.name = "traveller"}, std::string{"home"});
  auto all = targets(here);
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
      if (!t.also(e))
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
