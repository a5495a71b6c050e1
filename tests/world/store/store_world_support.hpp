// What tests of worlds on a store share: a member's options and environment naming the store,
// a fixture that skips where etcd is not installed, and a world of three whose ranks 0 and 2 are
// member processes.
#pragma once

#include "../member_events.hpp"
#include "../member_processes.hpp"
#include "etcd_servers.hpp"

#include "troupe/world/world.hpp"
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

/// A world of three on an etcd server of its own, world `world_name` in it: ranks 0 and 2 are
/// member processes playing `role_0` and `role_2`, rank 1 is the test's member.
struct world_of_three_on_store {
  world_of_three_on_store(const std::string& world_name, const std::string& role_0,
                          const std::string& role_2)
    : store(servers.address() + "/" + world_name), zero(role_0, store_environment(0, 3, store)),
      two(role_2, store_environment(2, 3, store)), world(rt, store_options(1, 3, store)),
      events(world) {}

  etcd_servers servers{1};
  std::string store;
  member_process zero;
  member_process two;
  troupe::runtime rt;
  troupe::world world;
  member_events events;
};

} // namespace troupe::testing
