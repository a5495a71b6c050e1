// The main of a test binary that is also a process pool's worker program: started with a
// --troupe-* flag it serves as a worker (or node) and never returns from the runtime's
// constructor; otherwise no runtime starts here, so listing the tests starts no actor system
// (each test makes its own). Include it in one source file of the binary.
#pragma once

#include "troupe/actors/runtime.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string_view>

int main(int argc, char** argv) {
  const std::span<char*> args{argv, static_cast<std::size_t>(argc)};
  if (std::any_of(args.begin(), args.end(),
                  [](const char* a) { return std::string_view{a}.starts_with("--troupe-"); }))
    troupe::runtime serve_if_worker{argc, argv};
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
