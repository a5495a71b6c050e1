#include "troupe/actors/error.hpp"
#include "troupe/actors/remote_exception.hpp"
#include "troupe/actors/serialization.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

template <class Error, class Std>
void expect_caught_as_both(const std::string& message) {
  try {
    throw Error(message);
  } catch (const troupe::error& e) {
    EXPECT_EQ(std::string{e.what()}, message);
  }
  try {
    throw Error(message);
  } catch (const Std& e) {
    EXPECT_EQ(std::string{e.what()}, message);
  }
  try {
    throw Error(message);
  } catch (const std::exception& e) { // one std::exception base, so this still matches
    EXPECT_EQ(std::string{e.what()}, message);
  }
}

TEST(errors, every_error_is_a_troupe_error_and_its_standard_kind) {
  expect_caught_as_both<troupe::invalid_argument, std::invalid_argument>("bad chunksize 0");
  expect_caught_as_both<troupe::state_error, std::logic_error>("join on running pool");
  expect_caught_as_both<troupe::timeout_error, std::runtime_error>("late");
  expect_caught_as_both<troupe::pool_closed, std::runtime_error>("closed");
  expect_caught_as_both<troupe::serialization_error, std::runtime_error>("bad bytes");
  expect_caught_as_both<troupe::worker_lost, std::runtime_error>("worker 3 died");
  expect_caught_as_both<troupe::queue_closed, std::runtime_error>("queue closed");
  expect_caught_as_both<troupe::capacity_error, std::runtime_error>("too big");
}

TEST(errors, task_error_carries_type_message_and_worker) {
  troupe::task_error e{"std::domain_error", "unlucky 13", "worker 1"};
  EXPECT_EQ(e.type_name(), "std::domain_error");
  EXPECT_EQ(e.message(), "unlucky 13");
  EXPECT_EQ(e.worker(), "worker 1");
  const std::string what = e.what();
  EXPECT_NE(what.find("std::domain_error"), std::string::npos);
  EXPECT_NE(what.find("unlucky 13"), std::string::npos);
  EXPECT_NE(what.find("worker 1"), std::string::npos);
}

/// Rethrows `why`, for the test to catch as what it should be.
[[noreturn]] void rethrow(const std::exception_ptr& why) { std::rethrow_exception(why); }

TEST(errors, a_failure_from_another_process_becomes_the_exception_its_type_names) {
  using troupe::detail::failure;
  EXPECT_FALSE(failure{}.failed());
  EXPECT_TRUE((failure{"int", ""}.failed())); // `throw 42` has a type and no message
  const failure registered{troupe::detail::type_name<troupe::capacity_error>(), "too big"};
  ASSERT_TRUE(registered.failed());
  try {
    rethrow(registered.exception("worker 2"));
  } catch (const troupe::capacity_error& e) {
    EXPECT_EQ(std::string{e.what()}, "too big");
    const auto* origin = dynamic_cast<const troupe::remote_origin*>(&e);
    ASSERT_NE(origin, nullptr);
    EXPECT_EQ(origin->worker(), "worker 2");
  }
  try {
    rethrow(failure{"my::unregistered", "odd"}.exception("worker 3"));
  } catch (const troupe::task_error& e) {
    EXPECT_EQ(e.type_name(), "my::unregistered");
    EXPECT_EQ(e.message(), "odd");
    EXPECT_EQ(e.worker(), "worker 3");
  }
  // Without a type, the request itself could not be read or run.
  EXPECT_THROW(rethrow(failure{"", "no task named 'f'"}.exception("worker 4")),
               troupe::serialization_error);
}

TEST(errors, a_failure_of_this_process_becomes_its_type_plainly) {
  using troupe::detail::failure;
  const auto lost = failure::of<troupe::worker_lost>("worker 1 died").with(" while running this");
  EXPECT_EQ(lost.type, troupe::detail::type_name<troupe::worker_lost>());
  try {
    rethrow(lost.exception());
  } catch (const troupe::worker_lost& e) {
    EXPECT_EQ(std::string{e.what()}, "worker 1 died while running this");
    EXPECT_EQ(troupe::origin_of(e), nullptr); // it happened here: no other process to name
  }
  try {
    rethrow(failure{"my::unregistered", "odd"}.exception());
  } catch (const troupe::task_error& e) {
    EXPECT_EQ(e.type_name(), "my::unregistered");
    EXPECT_EQ(e.worker(), "");
  }
  EXPECT_THROW(rethrow(failure{"", "unreadable"}.exception()), troupe::serialization_error);
}

TEST(errors, the_exception_being_handled_is_described_as_a_failure) {
  using troupe::detail::current_failure;
  try {
    throw troupe::key_error("no key 'k'");
  } catch (...) {
    const auto why = current_failure();
    EXPECT_EQ(why.type, troupe::detail::type_name<troupe::key_error>());
    EXPECT_EQ(why.message, "no key 'k'");
  }
  try {
    throw 42;
  } catch (...) {
    const auto why = current_failure();
    EXPECT_EQ(why.type, "int");
    EXPECT_TRUE(why.failed());
  }
}

} // namespace
