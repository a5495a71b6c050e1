// What tests of worlds on a store share: a member's options and environment naming the store,
// and a fixture that skips where etcd is not installed.
#pragma once

#include "etcd_servers.hpp"

#include "troupe/world/world_options.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>

namespace troupe::testing {

/// What a member process needs to join a world of `size` on `store` at `rank` (named so).
inline std::map<std::string, std::string> store_environment(int rank, int size,
                                                            const std::string& store) {
  return {{"TROUPE_RANK", std::to_string(rank)},
          {"TROUPE_WORLD_SIZE", std::to_string(size)},
          {"TROUPE_NAME", std::to_string(rank)},
          {"TROUPE_STORE", store}};
}

/// The same for a member in the test's own process.
inline troupe::world_options store_options(int rank, int size, const std::string& store) {
  troupe::world_options options;
  options.name = std::to_string(rank);
  options.rank = rank;
  options.world_size = size;
  options.store = store;
  options.timeout = std::chrono::seconds{20};
  return options;
}

class world_on_store : public ::testing::Test {
protected:
  void SetUp() override {
    if (!etcd_servers::installed())
      GTEST_SKIP() << "etcd is not installed (scripts/setup.sh installs etcd-server)";
  }
};

} // namespace troupe::testing
