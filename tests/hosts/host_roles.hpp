// The members of the hosts tests: this program, started on each host of a test bed
// (testbed.sh) with its role in TROUPE_TEST_ROLE and its membership in TROUPE_RANK,
// TROUPE_WORLD_SIZE, TROUPE_ADDRESS and, for TLS, TROUPE_TLS_CERT, TROUPE_TLS_KEY, TROUPE_TLS_CA.
// A failed check throws; the program then exits non-zero with the message.
#pragma once

#include "troupe/world/world.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

namespace troupe::hosts {

using namespace std::chrono_literals;

using role = std::function<void(troupe::runtime&)>;
std::map<std::string, role>& roles();

struct role_registration {
  role_registration(const std::string& name, role body) { roles().emplace(name, std::move(body)); }
};

#define TROUPE_HOST_ROLE(name)                                                                     \
  void host_role_##name(troupe::runtime&);                                                         \
  const ::troupe::hosts::role_registration host_role_registered_##name{#name, host_role_##name};   \
  void host_role_##name([[maybe_unused]] troupe::runtime& rt)

inline void require(bool condition, const std::string& what) {
  if (!condition)
    throw std::runtime_error("check failed: " + what);
}

/// This member's world options: from the environment, plain (allow_insecure) unless the
/// environment gives TLS certificates.
troupe::world_options member_options();

/// The test's folder (TROUPE_TEST_DIR), shared by every host: where members leave marks.
std::string test_dir();
/// Leaves mark `name` in the test's folder, for the test script to act on.
void mark(const std::string& name);
/// Waits up to `limit` for mark `name` (the test script's, or another member's).
void await_mark(const std::string& name, std::chrono::milliseconds limit);

/// Runs `call` until it throws a troupe error or `limit` passes; the error's type name
/// ("peer_lost", "timeout_error", ...), or "none".
std::string failure_of(const std::function<void()>& call, std::chrono::milliseconds limit);

} // namespace troupe::hosts
