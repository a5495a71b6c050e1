// A member's failed reply is made as the failure value every road of troupe carries, travels as a
// status and a text (member_messages.hpp) and becomes, on the side that asked, that failure again;
// its exception is the troupe error the status names, thrown plainly (the member that refused is
// named in the text).
#include "member_messages.hpp" // world/src

#include "troupe/actors/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace troupe::detail {
namespace {

template <class Expected>
void expect_reply_throws(reply_status status) {
  const auto why = reply_failure(static_cast<std::uint8_t>(status), "rank 2: no key 'k'");
  ASSERT_TRUE(why.failed());
  try {
    std::rethrow_exception(why.exception());
  } catch (const Expected& e) {
    EXPECT_EQ(std::string{e.what()}, "rank 2: no key 'k'");
    EXPECT_EQ(origin_of(e), nullptr);
  }
}

TEST(reply_failure, each_status_is_the_troupe_error_it_names) {
  expect_reply_throws<invalid_argument>(reply_status::invalid_argument);
  expect_reply_throws<key_error>(reply_status::key_error);
  expect_reply_throws<state_error>(reply_status::state_error);
  expect_reply_throws<serialization_error>(reply_status::serialization_error);
  expect_reply_throws<peer_lost>(reply_status::peer_lost);
}

TEST(reply_failure, ok_is_no_failure_and_an_unknown_status_is_named) {
  EXPECT_FALSE(reply_failure(static_cast<std::uint8_t>(reply_status::ok), "").failed());
  const auto odd = reply_failure(200, "what");
  try {
    std::rethrow_exception(odd.exception());
  } catch (const state_error& e) {
    EXPECT_NE(std::string{e.what()}.find("200"), std::string::npos) << e.what();
  }
}

template <class E>
void expect_round_trip() {
  const auto sent = failure::of<E>("member 'b' (rank 1): no service 's'");
  const auto received = reply_failure(wire_status(sent), sent.message);
  EXPECT_EQ(received.type, sent.type);
  EXPECT_EQ(received.message, sent.message);
}

TEST(reply_failure, each_member_error_travels_as_its_status_and_comes_back_as_itself) {
  expect_round_trip<invalid_argument>();
  expect_round_trip<key_error>();
  expect_round_trip<state_error>();
  expect_round_trip<serialization_error>();
  expect_round_trip<peer_lost>();
}

TEST(reply_failure, other_failures_travel_as_the_nearest_status) {
  EXPECT_EQ(wire_status({}), static_cast<std::uint8_t>(reply_status::ok));
  EXPECT_EQ(wire_status(failure{"std::bad_alloc", "std::bad_alloc"}),
            static_cast<std::uint8_t>(reply_status::state_error));
  EXPECT_EQ(wire_status(failure::of<worker_lost>("worker 3 exited")),
            static_cast<std::uint8_t>(reply_status::state_error));
  // No type: the request itself could not be read (failure.hpp).
  EXPECT_EQ(wire_status(failure{"", "truncated request"}),
            static_cast<std::uint8_t>(reply_status::serialization_error));
}

} // namespace
} // namespace troupe::detail
