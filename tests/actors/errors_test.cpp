#include "troupe/actors/error.hpp"

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

} // namespace
