// troupe's transport against strangers, on 127.0.0.1: silent connections closed at the
// handshake deadline and capped, a forged CAF frame refused before anything is allocated for
// it, a wrong secret refused and guessing throttled, TLS without forward secrecy refused. After
// each, the listener still admits a process that proves the secret.
#include "stranger.hpp"

#include "handshake.hpp"

#include "../process_usage.hpp"

#include "../world/member_processes.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/actors/network.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/runtime_state.hpp"

#include <caf/all.hpp>
#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace troupe::testing {
namespace {

using namespace std::chrono_literals;

caf::behavior echo(caf::event_based_actor*, std::int32_t) {
  return {[](std::int32_t x) { return x; }};
}

/// An echo actor published on 127.0.0.1 under `policy`, and a way to reach it as a member would.
class published_echo {
public:
  explicit published_echo(troupe::detail::link_policy policy,
                          std::optional<troupe::tls_options> tls = std::nullopt)
    : policy_(std::move(policy)) {
    if (tls)
      troupe::detail::use_tls(state(), *tls);
    actor_ = state().system->spawn(echo, std::int32_t{0});
    port = troupe::detail::publish(state(), actor_, {"127.0.0.1", 0}, policy_);
  }
  ~published_echo() {
    troupe::detail::unpublish(state(), actor_, port);
    caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
  }

  /// Connects under `policy` and asks the echo for 41; what it answered.
  int round_trip(const troupe::detail::link_policy& policy) {
    auto remote = troupe::detail::connect(state(), {"127.0.0.1", port}, policy,
                                          std::chrono::steady_clock::now() + 10s);
    caf::scoped_actor self{*state().system};
    int answer = -1;
    self->request(remote, 5s, std::int32_t{41})
      .receive([&](std::int32_t x) { answer = x; }, [](caf::error&) {});
    return answer;
  }

  troupe::detail::runtime_state& state() { return troupe::runtime_state_of(rt); }

  troupe::runtime rt;
  std::uint16_t port = 0;

private:
  troupe::detail::link_policy policy_;
  caf::actor actor_;
};

TEST(transport_security, silent_strangers_are_capped_closed_at_the_deadline_and_cost_no_cpu) {
  published_echo listener{{.secret = "s", .name = "listener"}};
  std::vector<std::unique_ptr<raw_connection>> strangers;
  for (int i = 0; i < 80; ++i) // 16 beyond the 64 handshakes allowed at once
    strangers.push_back(std::make_unique<raw_connection>(listener.port));
  int closed_at_once = 0;
  for (auto& s : strangers)
    closed_at_once += s->closed_within(50ms) ? 1 : 0;
  EXPECT_GE(closed_at_once, 16) << "connections beyond the cap were kept";
  const double cpu_before = cpu_seconds();
  std::this_thread::sleep_for(1s);
  EXPECT_LT(cpu_seconds() - cpu_before, 0.2) << "silent strangers cost CPU";
  int closed = 0;
  for (auto& s : strangers)
    closed += s->closed_within(7s) ? 1 : 0;
  EXPECT_EQ(closed, 80) << "a silent connection outlived the handshake deadline";
  EXPECT_EQ(listener.round_trip({.secret = "s", .name = "member"}), 41);
}

TEST(transport_security, a_forged_frame_header_is_refused_before_anything_is_allocated) {
  published_echo listener{{.name = "listener"}}; // no secret: any local process gets past
  const long before = resident_kib();
  std::vector<std::unique_ptr<raw_connection>> forgers;
  for (int i = 0; i < 3; ++i) {
    forgers.push_back(std::make_unique<raw_connection>(listener.port));
    ASSERT_EQ(handshake_as(*forgers.back(), "", "forger"), handshake_outcome::admitted);
    forgers.back()->send(basp_header(0x01, 0xFFFFFF00u)); // a client handshake of ~4 GiB
  }
  for (auto& f : forgers)
    EXPECT_TRUE(f->closed_within(3s)) << "the forged frame's connection stayed open";
  EXPECT_LT(resident_kib() - before, 64 * 1024) << "memory was allocated for a forged frame";
  EXPECT_EQ(listener.round_trip({.name = "member"}), 41);
}

TEST(transport_security, a_routed_message_is_refused) {
  published_echo listener{{.name = "listener"}};
  raw_connection forger{listener.port};
  ASSERT_EQ(handshake_as(forger, "", "forger"), handshake_outcome::admitted);
  forger.send(basp_header(0x03, 16)); // routed messages carry a sender node anyone can write
  EXPECT_TRUE(forger.closed_within(3s));
}

TEST(transport_security, a_wrong_secret_is_refused_and_guessing_is_throttled) {
  published_echo listener{{.secret = "right", .name = "listener"}};
  try {
    listener.round_trip({.secret = "wrong", .name = "member"});
    ADD_FAILURE() << "a wrong secret was admitted";
  } catch (const troupe::network_error& e) {
    EXPECT_NE(std::string{e.what()}.find("secret"), std::string::npos) << e.what();
  }
  int refused = 0;
  int closed_at_once = 0;
  for (int i = 0; i < 20; ++i) {
    raw_connection guesser{listener.port};
    const auto outcome = handshake_as(guesser, "guess-" + std::to_string(i), "guesser");
    refused += outcome == handshake_outcome::refused ? 1 : 0;
    closed_at_once += outcome == handshake_outcome::closed_at_once ? 1 : 0;
  }
  EXPECT_LE(refused, 9) << "more guesses were checked than the burst allows";
  EXPECT_GE(closed_at_once, 11);
  EXPECT_EQ(listener.round_trip({.secret = "right", .name = "member"}), 41)
    << "the right secret was not admitted once the throttle let its source try again";
}

/// The highest descriptor open in this process.
int highest_descriptor() {
  int highest = 0;
  for (const auto& entry : std::filesystem::directory_iterator{"/proc/self/fd"})
    highest = std::max(highest, std::stoi(entry.path().filename().string()));
  return highest;
}

TEST(transport_security, a_process_out_of_descriptors_refuses_connections_without_spinning) {
  published_echo listener{{.secret = "s", .name = "listener"}};
  std::vector<int> clients; // made now, connected once no descriptor is left
  for (int i = 0; i < 3; ++i)
    clients.push_back(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  rlimit before{};
  getrlimit(RLIMIT_NOFILE, &before);
  rlimit scarce = before;
  scarce.rlim_cur = static_cast<rlim_t>(highest_descriptor() + 1);
  setrlimit(RLIMIT_NOFILE, &scarce);
  std::vector<int> fillers; // every free number below the limit taken
  for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;)
    fillers.push_back(fd);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(listener.port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int fd : clients)
    ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  const double cpu_before = cpu_seconds();
  std::this_thread::sleep_for(1s);
  const double spent = cpu_seconds() - cpu_before;
  int closed = 0;
  for (int fd : clients) {
    pollfd entry{fd, POLLIN, 0};
    char byte = 0;
    closed += poll(&entry, 1, 2000) == 1 && ::recv(fd, &byte, 1, 0) <= 0 ? 1 : 0;
  }
  for (int fd : fillers)
    ::close(fd);
  setrlimit(RLIMIT_NOFILE, &before);
  for (int fd : clients)
    ::close(fd);
  EXPECT_LT(spent, 0.2) << "the gate spun while no descriptor was left";
  EXPECT_EQ(closed, 3) << "connections waited in the backlog for a descriptor";
  EXPECT_EQ(listener.round_trip({.secret = "s", .name = "member"}), 41);
}

/// A listening socket on 127.0.0.1 (any port), closed with it.
struct loopback_listener {
  loopback_listener() {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        ::listen(fd, 4) != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size))
      throw std::runtime_error("loopback_listener: cannot listen");
    port = ntohs(address.sin_port);
  }
  ~loopback_listener() { ::close(fd); }
  /// The next connection, non-blocking; -1 if none came within `limit`.
  int accept_within(std::chrono::milliseconds limit) const {
    pollfd entry{fd, POLLIN, 0};
    if (::poll(&entry, 1, static_cast<int>(limit.count())) != 1)
      return -1;
    return ::accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  }
  /// What tells a role where this listens (TROUPE_TEST_PORT).
  std::map<std::string, std::string> environment() const {
    return {{"TROUPE_TEST_PORT", std::to_string(port)}};
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int port = 0;
};

/// Plays a troupe listener's side of the handshake on `fd`, with the roles' secret.
void prove_as_listener(int fd) {
  troupe::detail::shake_hands(fd, nullptr, troupe::detail::link_side::listener,
                              {.secret = "quiet", .name = "listener"}, nullptr, "127.0.0.1",
                              std::chrono::steady_clock::now() + 5s);
}

// A process whose connect was admitted by troupe's handshake and then never answered by CAF's
// (a peer that froze or hung right after proving itself) gives up at its deadline, and its
// runtime still ends: the transport's actor, which the unanswered connect keeps referenced,
// is ended with the runtime instead of waited for.
TEST(transport_security, a_runtime_ends_after_a_connect_a_silent_peer_never_answered) {
  loopback_listener silent;
  member_process joiner{"connects_to_a_silent_peer", silent.environment()};
  const int fd = silent.accept_within(10s);
  ASSERT_GE(fd, 0) << "the joiner did not connect";
  EXPECT_NO_THROW(prove_as_listener(fd));
  EXPECT_EQ(joiner.exit_code(30s), 0) << "its runtime did not end";
  ::close(fd);
}

// A runtime that ends while its transport is in an outgoing handshake waits for the handshake
// (bounded by its deadline) instead of leaving the transport's actor running into the actor
// system's end, and hands the connection made meanwhile to nobody: it closes it.
TEST(transport_security, a_runtime_ending_during_a_handshake_waits_for_it_and_closes_the_link) {
  loopback_listener slow;
  member_process joiner{"stops_during_a_handshake", slow.environment()};
  const int fd = slow.accept_within(10s);
  ASSERT_GE(fd, 0) << "the joiner did not connect";
  std::this_thread::sleep_for(1s); // its runtime is ending meanwhile
  EXPECT_EQ(::waitpid(joiner.pid(), nullptr, WNOHANG), 0) << "it ended before its handshake did";
  EXPECT_NO_THROW(prove_as_listener(fd));
  pollfd closed{fd, POLLIN, 0};
  char byte = 0;
  EXPECT_TRUE(::poll(&closed, 1, 10'000) == 1 && ::recv(fd, &byte, 1, 0) == 0)
    << "the joiner kept the connection";
  EXPECT_EQ(joiner.exit_code(30s), 0) << "its runtime did not end";
  ::close(fd);
}

/// A TLS client with `ciphers` (TLS 1.2 at most) and the CA's certificate for `name`; whether
/// its handshake with 127.0.0.1:port succeeds.
bool tls_client_admitted(int port, const std::string& folder, const std::string& name,
                         const char* ciphers) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context{SSL_CTX_new(TLS_client_method()),
                                                            SSL_CTX_free};
  SSL_CTX_set_max_proto_version(context.get(), TLS1_2_VERSION);
  SSL_CTX_set_security_level(context.get(), 0);
  if (SSL_CTX_set_cipher_list(context.get(), ciphers) != 1 ||
      SSL_CTX_use_certificate_file(context.get(), (folder + "/" + name + ".pem").c_str(),
                                   SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_use_PrivateKey_file(context.get(), (folder + "/" + name + ".key").c_str(),
                                  SSL_FILETYPE_PEM) != 1)
    return false;
  raw_connection c{port};
  std::unique_ptr<SSL, decltype(&SSL_free)> session{SSL_new(context.get()), SSL_free};
  SSL_set_fd(session.get(), c.fd());
  return SSL_connect(session.get()) == 1;
}

/// Certificates for a listener and a client from one CA, and the echo published over TLS.
struct tls_echo {
  tls_echo() : listener{{.name = "listener", .tls = true}, options_of(certs.path())} {}
  static troupe::tls_options options_of(const std::string& folder) {
    const auto command = std::string{TROUPE_MAKE_CERTS} + " " + folder + " listener client";
    if (std::system(command.c_str()) != 0)
      throw std::runtime_error("make-certs.sh failed: " + command);
    return {folder + "/listener.pem", folder + "/listener.key", folder + "/ca.pem"};
  }

  troupe::testing::temp_folder certs;
  published_echo listener;
};

TEST(transport_security, strangers_that_send_a_byte_and_fall_silent_cost_no_cpu) {
  tls_echo tls;
  auto& listener = tls.listener;
  std::vector<std::unique_ptr<raw_connection>> strangers;
  for (int i = 0; i < 32; ++i) {
    strangers.push_back(std::make_unique<raw_connection>(listener.port));
    strangers.back()->send("t"); // the start of a plain hello, or of anything
  }
  std::this_thread::sleep_for(100ms);
  const double cpu_before = cpu_seconds();
  std::this_thread::sleep_for(1s);
  EXPECT_LT(cpu_seconds() - cpu_before, 0.1) << "half-sent first bytes cost CPU";
}

TEST(transport_security, tls_without_forward_secrecy_is_refused) {
  tls_echo tls;
  const auto port = tls.listener.port;
  const auto folder = tls.certs.path();
  EXPECT_FALSE(tls_client_admitted(port, folder, "client", "AES128-SHA"))
    << "static RSA key exchange was accepted";
  EXPECT_FALSE(tls_client_admitted(port, folder, "client", "DHE-RSA-AES128-SHA"))
    << "a CBC suite was accepted";
  EXPECT_TRUE(tls_client_admitted(port, folder, "client", "ECDHE-RSA-AES128-GCM-SHA256"))
    << "the control: a forward-secret AEAD suite";
}

} // namespace
} // namespace troupe::testing
