// Tasks, values and helpers the world tests and their member processes share.
#pragma once

#include "member_processes.hpp"

#include "troupe/world/world.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

TROUPE_TASK(add_numbers, [](int a, int b) { return a + b; });
TROUPE_TASK(greet, [](std::string who) { return "hello " + who; });
TROUPE_TASK(fail_with, [](std::string message) -> int { throw std::out_of_range(message); });
TROUPE_TASK(sleep_ms, [](int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds{ms});
  return ms;
});

/// machin's WorkerService counter, paired by one member and counted up by the others.
struct counter {
  int count = 0;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(count);
  }
};
TROUPE_TASK(count_up, [](counter& c) { return ++c.count; });

namespace troupe::testing {

using namespace std::chrono_literals;

/// The members of the three-member worlds most tests make, sorted.
inline const std::vector<std::string> everyone{"0", "1", "2"};

/// A failed check in a member process: its role exits non-zero with this message.
inline void require(bool condition, const std::string& what) {
  if (!condition)
    throw std::runtime_error("check failed: " + what);
}

/// Runs `body` in a world joined from the environment, as a member process.
template <class Body>
int as_member(Body&& body) {
  troupe::runtime rt;
  auto options = troupe::world_options::from_environment();
  options.timeout = 20s;
  troupe::world world{rt, options};
  body(world);
  return 0;
}

/// Exit codes of member processes that may be turned away: 0 if `body` ran, 3 if this member
/// was refused (invalid_argument, network_error), 4 if rank 0 went away or time ran out.
template <class Body>
int refused_or_lost_code(Body&& body) {
  try {
    body();
    return 0;
  } catch (const troupe::invalid_argument& e) {
    std::cerr << "refused: " << e.what() << "\n";
    return 3;
  } catch (const troupe::network_error& e) {
    std::cerr << "refused: " << e.what() << "\n";
    return 3;
  } catch (const troupe::peer_lost& e) {
    std::cerr << "lost: " << e.what() << "\n";
    return 4;
  } catch (const troupe::timeout_error& e) {
    std::cerr << "lost: " << e.what() << "\n";
    return 4;
  }
}

/// Expects forming the world with `options` to time out with a message containing `text`.
inline void expect_timeout_naming(troupe::runtime& rt, const troupe::world_options& options,
                                  const std::string& text) {
  try {
    troupe::world world{rt, options};
    ADD_FAILURE() << "the world formed";
  } catch (const troupe::timeout_error& e) {
    EXPECT_NE(std::string{e.what()}.find(text), std::string::npos) << e.what();
  }
}

/// In a member process: returns once `member` has left the world (a call to it is peer_lost),
/// checked every 20 ms; fails the role if it is still there after 20 s.
inline void wait_until_gone(troupe::rpc_group& group, const std::string& member) {
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < until) {
    try {
      group.rpc_sync(member, add_numbers, 1, 1);
    } catch (const troupe::peer_lost& e) {
      // Rank 0's loss puts every member out of reach; `member` itself is gone only once its
      // own loss or leave is known (a test may go on calling it after killing rank 0).
      if (member == "0" ||
          std::string_view{e.what()}.find("rank 0 was lost") == std::string_view::npos)
        return;
    }
    std::this_thread::sleep_for(20ms);
  }
  require(false, "member '" + member + "' left");
}

/// Options for this test process as member `rank` of a world of `size` on `port`.
inline troupe::world_options member_options(int rank, int size, int port) {
  troupe::world_options options;
  options.name = std::to_string(rank);
  options.rank = rank;
  options.world_size = size;
  options.address = "127.0.0.1:" + std::to_string(port);
  options.timeout = 20s;
  return options;
}

/// Starts members 1..size-1 playing `role`; this process is to be member 0.
inline std::vector<member_process> start_members(const std::string& role, int size, int port) {
  std::vector<member_process> members;
  for (int rank = 1; rank < size; ++rank)
    members.emplace_back(role, member_environment(rank, size, port));
  return members;
}

/// Expects every member to exit with 0 within `limit`.
inline void expect_clean_exits(std::vector<member_process>& members,
                               std::chrono::milliseconds limit = 30s) {
  for (auto& member : members)
    EXPECT_EQ(member.exit_code(limit), 0);
}

} // namespace troupe::testing
