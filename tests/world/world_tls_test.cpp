// Worlds over TLS, with certificates made by scripts/make-certs.sh: members with certificates
// from the world's CA work together; one from another CA, or without TLS, is refused.
#include "world_test_support.hpp"

#include <cstdlib>
#include <fstream>

namespace troupe::testing {
namespace {

/// Makes a CA and certificates for `names` in `folder`.
void make_certs(const std::string& folder, const std::string& names) {
  const auto command = std::string{TROUPE_MAKE_CERTS} + " " + folder + " " + names;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

troupe::tls_options tls_of(const std::string& folder, const std::string& name) {
  // snippet-begin: tls
  return troupe::tls_options{.certificate = folder + "/" + name + ".pem", // names the member
                             .key = folder + "/" + name + ".key",
                             .ca_file = folder + "/ca.pem"};
  // snippet-end: tls
}

/// A member whose certificates are in TROUPE_TEST_CERTS (none: no TLS). Exits 0 after a call
/// and a barrier with the others, 3 if refused (network_error), 4 if time ran out.
TROUPE_ROLE(tls_member) {
  return refused_or_lost_code([] {
    troupe::runtime rt;
    // snippet-begin: tls-member
    auto options = troupe::world_options::from_environment();
    options.timeout = 20s;
    if (const char* folder = std::getenv("TROUPE_TEST_CERTS"); folder && *folder)
      options.tls = tls_of(folder, options.name);
    troupe::world world{rt, options};
    // snippet-end: tls-member
    auto group = world.create_rpc_group("secure", world.members());
    require(group.rpc_sync("0", greet, std::string{"tls"}) == "hello tls", "a call over TLS");
    group.barrier();
  });
}

class world_tls : public ::testing::Test {
protected:
  void SetUp() override { make_certs(certs.path(), "0=127.0.0.1 1 2"); }

  member_process member(int rank, int size, const std::string& folder) {
    auto environment = member_environment(rank, size, port);
    environment["TROUPE_TEST_CERTS"] = folder;
    return member_process{"tls_member", environment};
  }

  temp_folder certs;
  int port = free_port();
  troupe::runtime rt;
};

TEST_F(world_tls, members_with_certificates_from_the_ca_work_together) {
  std::vector<member_process> members;
  members.push_back(member(1, 3, certs.path()));
  members.push_back(member(2, 3, certs.path()));
  {
    auto options = member_options(0, 3, port);
    options.tls = tls_of(certs.path(), "0");
    troupe::world world{rt, options};
    auto group = world.create_rpc_group("secure", world.members());
    EXPECT_EQ(group.rpc_sync("1", add_numbers, 20, 22), 42);
    EXPECT_EQ(group.rpc_sync("0", greet, std::string{"tls"}), "hello tls");
    group.barrier();
  }
  expect_clean_exits(members);
}

/// Rank 0 uses TLS with its CA; the member of rank 1 comes with `folder`'s certificates.
void expect_refused(int port, troupe::runtime& rt, member_process joiner,
                    const std::string& certs) {
  auto options = member_options(0, 2, port);
  options.tls = tls_of(certs, "0");
  options.timeout = 4s;
  EXPECT_THROW((troupe::world{rt, options}), troupe::timeout_error);
  EXPECT_EQ(joiner.exit_code(30s), 3);
}

TEST_F(world_tls, a_certificate_from_another_ca_is_refused) {
  temp_folder foreign;
  make_certs(foreign.path(), "1");
  expect_refused(port, rt, member(1, 2, foreign.path()), certs.path());
}

TEST_F(world_tls, a_member_without_tls_is_refused) {
  expect_refused(port, rt, member(1, 2, ""), certs.path());
}

TEST_F(world_tls, unreadable_tls_files_are_named) {
  auto options = member_options(0, 1, port);
  options.tls = tls_of(certs.path(), "0");
  options.tls->key = certs.path() + "/missing.key";
  try {
    troupe::world world{rt, options};
    ADD_FAILURE() << "a missing key was accepted";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("missing.key"), std::string::npos) << e.what();
  }
  options.tls = tls_of(certs.path(), "0");
  options.tls->key = certs.path() + "/1.key"; // another certificate's key
  EXPECT_THROW((troupe::world{rt, options}), troupe::invalid_argument);
}

} // namespace
} // namespace troupe::testing
