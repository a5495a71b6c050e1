// The check every handle type passes when it holds nothing (default-constructed or moved from):
// using it throws state_error naming the type, never a crash.
#pragma once

#include "troupe/actors/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace troupe::testing {

/// `use()` throws state_error saying "empty <type>".
template <class Use>
void expect_empty_handle_error(Use use, const std::string& type) {
  try {
    use();
    ADD_FAILURE() << "expected state_error from an empty " << type;
  } catch (const troupe::state_error& e) {
    EXPECT_NE(std::string{e.what()}.find("empty " + type), std::string::npos) << e.what();
  }
}

} // namespace troupe::testing
