// How a member takes the calls other members make to the actors it hosts (white box, world/src):
// each handle's calls run in the order it numbered them whatever order they arrive in; a number
// that comes twice, calls that come too far ahead, a call for another incarnation or an unknown
// method, and arguments that do not decode are each refused with a typed error, and nothing else
// runs.
#include "hosted_actors.hpp" // world/src

#include "../eventually.hpp"
#include "../tally_actor.hpp"

#include "troupe/actors/runtime.hpp"
#include "troupe/actors/runtime_state.hpp"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>

namespace troupe::testing {
namespace {

using troupe::detail::actor_call_envelope;
using troupe::detail::actor_reply;

/// The answers a test's calls got, by the number each was sent with.
class answers {
public:
  troupe::detail::actor_answer to(std::uint64_t seq) {
    return [this, seq](troupe::detail::reply_encoder encode) {
      auto reply = troupe::deserialize<actor_reply>(encode());
      std::lock_guard guard{mutex_};
      got_.emplace(seq, std::move(reply));
    };
  }
  bool has(std::uint64_t seq) {
    std::lock_guard guard{mutex_};
    return got_.contains(seq);
  }
  /// The value call `seq` returned (waiting for it, bounded); -1 if it failed.
  int value(std::uint64_t seq) {
    EXPECT_TRUE(eventually([&] { return has(seq); })) << "call " << seq;
    std::lock_guard guard{mutex_};
    const auto& reply = got_.at(seq);
    if (reply.failure)
      return -1;
    const auto outcome =
      troupe::deserialize<troupe::detail::chunk_outcomes<int>>(std::span{reply.outcomes});
    return outcome.first.empty() ? -1 : outcome.first.front();
  }
  /// Why call `seq` was refused (waiting for it, bounded): its type and message.
  std::string refusal(std::uint64_t seq) {
    EXPECT_TRUE(eventually([&] { return has(seq); })) << "call " << seq;
    std::lock_guard guard{mutex_};
    const auto& reply = got_.at(seq);
    return reply.failure ? reply.failure->why.type + ": " + reply.failure->why.message : "none";
  }

private:
  std::mutex mutex_;
  std::map<std::uint64_t, actor_reply> got_;
};

class hosted_actors_test : public ::testing::Test {
protected:
  troupe::runtime rt;
  troupe::detail::hosted_actors hosted{troupe::runtime_state_of(rt)};
  std::uint64_t incarnation =
    hosted.spawn("g", "t", troupe::detail::actor_type_key<tally>(),
                 {troupe::detail::encode_constructor<tally>(0), 8192, -1, false, 0});
  answers got;

  void TearDown() override { hosted.stop_all(); }

  /// Handle `handle`'s call number `seq` of add(k), answered into `got` under `key`.
  void add(std::uint64_t handle, std::uint64_t seq, int k, std::uint64_t key) {
    send(handle, seq, troupe::detail::method_key<tally>(&tally::add),
         troupe::detail::encode_calls(std::vector<std::tuple<int>>{{k}}), key);
  }
  void send(std::uint64_t handle, std::uint64_t seq, const std::string& method,
            std::vector<std::byte> arguments, std::uint64_t key,
            std::optional<std::uint64_t> other_incarnation = std::nullopt) {
    hosted.call("g", "t", method, 1,
                actor_call_envelope{other_incarnation.value_or(incarnation), handle, seq,
                                    std::move(arguments)},
                got.to(key));
  }
};

TEST_F(hosted_actors_test, EachHandlesCallsRunInTheOrderItNumberedThem) {
  add(7, 1, 10, 1); // came early: waits for number 0
  EXPECT_FALSE(eventually([&] { return got.has(1); }, std::chrono::milliseconds{50}));
  add(7, 0, 1, 0);
  EXPECT_EQ(got.value(0), 1);
  EXPECT_EQ(got.value(1), 11) << "it ran after number 0";
  add(8, 0, 100, 100); // another handle numbers its own calls
  EXPECT_EQ(got.value(100), 111);
}

TEST_F(hosted_actors_test, ANumberThatComesTwiceIsRefusedAndDoesNotRun) {
  add(7, 0, 1, 0);
  EXPECT_EQ(got.value(0), 1);
  add(7, 0, 5, 1);
  EXPECT_NE(got.refusal(1).find("actor call 0 came twice"), std::string::npos) << got.refusal(1);
  add(7, 1, 2, 2);
  EXPECT_EQ(got.value(2), 3) << "the repeated call did not run";
}

TEST_F(hosted_actors_test, CallsTooFarAheadOfTheirTurnAreRefusedBeyond4096) {
  for (std::uint64_t seq = 1; seq <= 4096; ++seq)
    add(7, seq, 1, seq);
  add(7, 4097, 1, 4097);
  const auto refusal = got.refusal(4097);
  EXPECT_NE(refusal.find("capacity_error"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("4096 calls that came before their turn"), std::string::npos) << refusal;
  EXPECT_FALSE(got.has(4096)) << "those held back still wait";
  add(7, 0, 1, 0);
  EXPECT_EQ(got.value(4096), 4097) << "number 0 let all 4096 run, in order";
}

// A call for an incarnation that no longer runs is refused at the door; one that cannot run
// (an unknown method, arguments that do not decode) takes its turn, so the calls after it go on.
TEST_F(hosted_actors_test, AnotherIncarnationAnUnknownMethodOrBadArgumentsAreRefused) {
  send(7, 0, troupe::detail::method_key<tally>(&tally::add),
       troupe::detail::encode_calls(std::vector<std::tuple<int>>{{1}}), 0, incarnation + 1);
  EXPECT_NE(got.refusal(0).find("no longer runs on this member"), std::string::npos)
    << got.refusal(0);
  send(7, 0, "troupe.actor:nothing#0", {}, 1);
  EXPECT_NE(got.refusal(1).find("no actor method troupe.actor:nothing#0"), std::string::npos)
    << got.refusal(1);
  send(7, 1, troupe::detail::method_key<tally>(&tally::add), std::vector<std::byte>(3), 2);
  EXPECT_NE(got.refusal(2).find("serialization_error"), std::string::npos) << got.refusal(2);
  add(7, 2, 4, 3);
  EXPECT_EQ(got.value(3), 4) << "none of them ran; those that reached the actor took their turn";
}

} // namespace
} // namespace troupe::testing
