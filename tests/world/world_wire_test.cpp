// The members' protocol itself (white box): a member of another troupe build is refused at the
// door, naming both versions, rather than misreading messages later.
#include "world_test_support.hpp"

#include "member_messages.hpp" // world/src: the messages members send each other

#include "troupe/actors/annotated.hpp"
#include "troupe/actors/network.hpp"

#include <caf/all.hpp>

#include <thread>

namespace troupe::testing {
namespace {

/// Spawned with an argument it does not need: CAF 0.17 binds a reference to a null argument
/// tuple for a function actor spawned without any, which UndefinedBehaviorSanitizer reports.
caf::behavior idle(caf::event_based_actor*, std::int32_t /*rank*/) {
  return {[](std::int32_t) {}};
}

TEST(world_wire, a_member_of_another_troupe_version_is_refused_naming_both) {
  troupe::runtime rt;
  const int port = free_port();
  auto options = member_options(0, 2, port);
  options.timeout = 3s;
  auto& state = troupe::runtime_state_of(rt);
  std::string refusal;
  std::thread stranger{[&] {
    auto rank0 = troupe::detail::connect(state, {"127.0.0.1", static_cast<std::uint16_t>(port)}, {},
                                         std::chrono::steady_clock::now() + 2s);
    auto member = state.system->spawn(idle, std::int32_t{1});
    caf::scoped_actor self{*state.system};
    self
      ->request(rank0, std::chrono::seconds{2}, troupe::detail::join_atom::value,
                troupe::detail::wire_version + 1, std::string{"old"}, std::int32_t{1},
                std::int32_t{2}, std::uint16_t{1}, std::string{"127.0.0.1"}, member)
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
  EXPECT_NE(refusal.find("wire version " + std::to_string(troupe::detail::wire_version + 1)),
            std::string::npos)
    << refusal;
}

/// A rendezvous request to rank 0 from this process (a world of one, so it is member 0's own),
/// carrying `payload`: the reply's status and payload.
std::pair<troupe::detail::reply_status, troupe::detail::wire_bytes>
rendezvous_with(troupe::runtime& rt, int port, troupe::detail::wire_bytes payload) {
  auto& state = troupe::runtime_state_of(rt);
  auto rank0 = troupe::detail::connect(state, {"127.0.0.1", static_cast<std::uint16_t>(port)}, {},
                                       std::chrono::steady_clock::now() + 5s);
  caf::scoped_actor self{*state.system};
  std::pair<troupe::detail::reply_status, troupe::detail::wire_bytes> answer{
    troupe::detail::reply_status::state_error, {}};
  self
    ->request(rank0, std::chrono::seconds{5}, troupe::detail::group_atom::value,
              std::string{"a check"},
              troupe::detail::to_wire(troupe::serialize(std::vector<int>{0})), std::int32_t{0},
              std::move(payload))
    .receive(
      [&](std::uint8_t status, std::string&, troupe::detail::wire_bytes& gathered) {
        troupe::detail::tsan_acquire(troupe::detail::mailbox_of(rank0));
        answer = {static_cast<troupe::detail::reply_status>(status), std::move(gathered)};
      },
      [](caf::error&) {});
  return answer;
}

// A shape check's signatures meet at rank 0: it gathers what each member brings, in the order
// of the rendezvous' ranks, and refuses more than 4 KiB from anyone.
TEST(world_wire, a_rendezvous_gathers_its_members_payloads_and_bounds_them) {
  troupe::runtime rt;
  const int port = free_port();
  troupe::world world{rt, member_options(0, 1, port)};
  const auto [status, gathered] = rendezvous_with(rt, port, troupe::detail::wire_bytes(88, 'x'));
  ASSERT_EQ(status, troupe::detail::reply_status::ok);
  const auto all = troupe::deserialize<std::vector<troupe::detail::wire_bytes>>(
    troupe::detail::from_wire(gathered));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], troupe::detail::wire_bytes(88, 'x'));
  EXPECT_EQ(rendezvous_with(rt, port, troupe::detail::wire_bytes(4097, 'x')).first,
            troupe::detail::reply_status::invalid_argument);
}

} // namespace
} // namespace troupe::testing
