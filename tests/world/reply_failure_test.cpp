// A member's failed reply travels as a status and a text (member_messages.hpp) and becomes, on the
// side that asked, the failure value every other road of troupe carries; its exception is the
// troupe error the status names, thrown plainly (the member that refused is named in the text).
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

} // namespace
} // namespace troupe::detail
