// The members' protocol itself (white box): a member of another troupe build is refused at the
// door, naming both versions, rather than misreading messages later.
#include "world_test_support.hpp"

#include "member_messages.hpp" // world/src: the messages members send each other
#include "roster.hpp"
#include "world_access.hpp"

#include "troupe/actors/annotated.hpp"
#include "troupe/actors/network.hpp"

#include <caf/all.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <thread>

namespace troupe::testing {
namespace {

/// Spawned with an argument it does not need: CAF 0.17 binds a reference to a null argument
/// tuple for a function actor spawned without any, which UndefinedBehaviorSanitizer reports.
caf::behavior idle(caf::event_based_actor*, std::int32_t /*rank*/) {
  return {[](std::int32_t) {}};
}

/// What rank 0 (formed here from `options`) answers a stranger that joins as rank 1 of 2 with
/// wire version `version` and devices `devices` (encoded as they travel).
std::string refusal_of_join(troupe::runtime& rt, const troupe::world_options& options, int port,
                            std::uint32_t version, troupe::detail::wire_bytes devices) {
  auto& state = troupe::runtime_state_of(rt);
  std::string refusal;
  std::thread stranger{[&] {
    troupe::detail::link_policy claim;
    claim.name = "stranger"; // the name its join claims
    auto rank0 = troupe::detail::connect(state, {"127.0.0.1", static_cast<std::uint16_t>(port)},
                                         claim, std::chrono::steady_clock::now() + 5s);
    auto member = state.system->spawn(idle, std::int32_t{1});
    caf::scoped_actor self{*state.system};
    self
      ->request(rank0, std::chrono::seconds{5}, troupe::detail::join_atom::value, version,
                std::string{"stranger"}, std::int32_t{1}, std::int32_t{2}, std::uint16_t{1},
                std::string{"127.0.0.1"}, member, std::move(devices))
      .receive(
        [&](std::uint8_t, std::string& text, troupe::detail::wire_bytes&) {
          // A raw CAF reply from this process's own member actor: what its handler wrote
          // happened before (troupe's own receivers say so to ThreadSanitizer the same way).
          troupe::detail::tsan_acquire(troupe::detail::mailbox_of(rank0));
          refusal = text;
        },
        [&](caf::error& e) { refusal = "error: " + caf::to_string(e); });
    caf::anon_send_exit(member, caf::exit_reason::user_shutdown);
  }};
  EXPECT_THROW((troupe::world{rt, options}), troupe::timeout_error);
  stranger.join();
  return refusal;
}

/// A join's details (roster.hpp) with `devices`, for a world of `max_world_size` at most.
troupe::detail::wire_bytes encoded_devices(const std::vector<std::string>& devices,
                                           int max_world_size) {
  return troupe::detail::to_wire(
    troupe::detail::encode_join_details({devices, static_cast<std::int32_t>(max_world_size)}));
}

TEST(world_wire, a_member_of_another_troupe_version_is_refused_naming_both) {
  troupe::runtime rt;
  const int port = free_port();
  auto options = member_options(0, 2, port);
  options.timeout = 3s;
  const auto refusal = refusal_of_join(rt, options, port, troupe::detail::wire_version + 1,
                                       encoded_devices({"cpu"}, 2));
  EXPECT_NE(refusal.find("wire version " + std::to_string(troupe::detail::wire_version + 1)),
            std::string::npos)
    << refusal;
}

/// The devices a stranger of each case sends with its join, and what rank 0's refusal must say
/// (the world has as many members as there are cases, and rank 0).
const std::vector<std::pair<troupe::detail::wire_bytes, std::string>>& bad_device_lists() {
  constexpr int size = 6;
  static const std::vector<std::pair<troupe::detail::wire_bytes, std::string>> cases{
    {troupe::detail::wire_bytes(3, '\xff'), "do not decode"},
    {encoded_devices({"cuda:0@2"}, size), "'cuda:0@2' is no device name"},
    {encoded_devices({"cpu", "cpu"}, size), "lists 'cpu' twice"},
    {encoded_devices({}, size), "lists no device"},
    {encoded_devices(std::vector<std::string>(257, "x"), size), "256 devices at most"},
  };
  return cases;
}

/// A process that joins as rank TROUPE_RANK, its name proven, with the devices of case
/// TROUPE_RANK - 1: exits 0 if rank 0 refuses it saying why (naming it), 1 otherwise.
TROUPE_ROLE(devices_stranger) {
  const int rank = std::atoi(std::getenv("TROUPE_RANK"));
  const auto name = "stranger-" + std::to_string(rank);
  const auto& [devices, expected] = bad_device_lists().at(static_cast<std::size_t>(rank - 1));
  troupe::runtime rt;
  auto& state = troupe::runtime_state_of(rt);
  troupe::detail::link_policy claim;
  claim.name = name;
  auto rank0 = troupe::detail::connect(
    state, {"127.0.0.1", static_cast<std::uint16_t>(std::atoi(std::getenv("TEST_PORT")))}, claim,
    std::chrono::steady_clock::now() + 10s);
  auto member = state.system->spawn(idle, std::int32_t{1});
  caf::scoped_actor self{*state.system};
  std::string refusal;
  self
    ->request(rank0, std::chrono::seconds{10}, troupe::detail::join_atom::value,
              troupe::detail::wire_version, name, std::int32_t{rank},
              std::int32_t{static_cast<std::int32_t>(bad_device_lists().size() + 1)},
              std::uint16_t{1}, std::string{"127.0.0.1"}, member, devices)
    .receive([&](std::uint8_t, std::string& text, troupe::detail::wire_bytes&) { refusal = text; },
             [&](caf::error& e) { refusal = "error: " + caf::to_string(e); });
  caf::anon_send_exit(member, caf::exit_reason::user_shutdown);
  const bool said = refusal.find(expected) != std::string::npos &&
                    refusal.find("'" + name + "'") != std::string::npos;
  if (!said)
    std::cerr << "stranger " << rank << " expected '" << expected << "', got: " << refusal << "\n";
  return said ? 0 : 1;
}

// A member's devices come with its join: rank 0 turns away a list that is not one (bytes that do
// not decode, a name the others could not parse, none, more than 256), naming the member and
// what was wrong, and the world does not form with it.
TEST(world_wire, a_join_whose_devices_are_no_list_is_refused_naming_them) {
  troupe::runtime rt;
  const int port = free_port();
  const int size = static_cast<int>(bad_device_lists().size()) + 1;
  auto options = member_options(0, size, port);
  options.timeout = 5s;
  std::vector<member_process> strangers;
  for (int rank = 1; rank < size; ++rank) {
    auto environment = member_environment(rank, size, port);
    environment["TEST_PORT"] = std::to_string(port);
    strangers.emplace_back("devices_stranger", std::move(environment));
  }
  EXPECT_THROW((troupe::world{rt, options}), troupe::timeout_error);
  for (auto& stranger : strangers)
    EXPECT_EQ(stranger.exit_code(20s), 0);
}

/// A rendezvous request to rank 0 from member 0 itself (a world of one), carrying `payload`:
/// what rank 0 gathers (rethrowing what it answers instead).
troupe::detail::wire_bytes rendezvous_with(troupe::world& world,
                                           troupe::detail::wire_bytes payload) {
  const auto core = troupe::detail::world_access::core(world);
  return troupe::detail::await_call(
    core->send(0,
               troupe::detail::checked_rendezvous_message::make(
                 "a check", troupe::detail::to_wire(troupe::serialize(std::vector<int>{0})), 0,
                 std::move(payload)),
               5s));
}

// A shape check's signatures meet at rank 0: it gathers what each member brings, in the order
// of the rendezvous' ranks, and refuses more than 4 KiB from anyone.
TEST(world_wire, a_rendezvous_gathers_its_members_payloads_and_bounds_them) {
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 1, free_port())};
  const auto gathered = rendezvous_with(world, troupe::detail::wire_bytes(88, 'x'));
  const auto all = troupe::deserialize<std::vector<troupe::detail::wire_bytes>>(
    troupe::detail::from_wire(gathered));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], troupe::detail::wire_bytes(88, 'x'));
  EXPECT_THROW((void)rendezvous_with(world, troupe::detail::wire_bytes(4097, 'x')),
               troupe::invalid_argument);
}

TEST(world_wire, test_ports_come_from_below_the_ephemeral_range_and_are_free) {
  // A port the kernel hands out itself (to a listener on port 0 or a connect's source end)
  // could be taken between free_loopback_port's release and the listener's bind.
  std::ifstream range{"/proc/sys/net/ipv4/ip_local_port_range"};
  int low = 0;
  ASSERT_TRUE(range >> low) << "no ephemeral range to compare with";
  for (int i = 0; i < 20; ++i) {
    const auto port = troupe::detail::free_loopback_port();
    if (low > 10'000) {
      EXPECT_LT(port, low);
    }
    EXPECT_GE(port, 1024);
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0)
      << "port " << port << " was handed out taken";
    ::close(fd);
  }
}

} // namespace
} // namespace troupe::testing
