// What the world security tests share: certificates made for a test, the roles their member
// processes play (security_roles.cpp), and waits for what the tests watch.
#pragma once

#include "stranger.hpp"

#include "../world/world_test_support.hpp"

#include <atomic>

namespace troupe::testing {

TROUPE_TASK(make_block, [](int mib) { return std::vector<char>(std::size_t(mib) << 20, 'x'); });

/// TLS options of the certificate `name` made by make_certs in `folder`.
troupe::tls_options tls_of(const std::string& folder, const std::string& name);

/// Makes a CA and certificates in `folder` (scripts/make-certs.sh's NAME[=HOST,...] list).
void make_certs(const std::string& folder, const std::string& names);

/// A formed world of two: rank 0 here, rank 1 a process serving calls ("patient_server")
/// until `server` is killed, and a group "all" of both.
struct world_with_a_server {
  world_with_a_server();

  troupe::runtime rt;
  int port = free_port();
  member_process server;
  troupe::world world;
  troupe::rpc_group group;
};

/// Whether `flag` is set within `limit` (checked every 20 ms).
bool becomes_true(const std::atomic<bool>& flag, std::chrono::milliseconds limit = 10s);

/// Rank 0 here with TLS (its certificate "0" from `folder`, giving up after 4 s); rank 1 a
/// process with the certificate `cert` from `folder`: expects rank 0 to time out and the member
/// to be refused (exit 3).
void expect_tls_member_refused(const std::string& folder, const std::string& cert);

} // namespace troupe::testing
