// The members' protocol itself (white box): a member of another troupe build is refused at the
// door, naming both versions, rather than misreading messages later.
#include "world_test_support.hpp"

#include "member_messages.hpp" // distributed/src: the messages members send each other

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
    auto rank0 = troupe::detail::connect(state, {"127.0.0.1", static_cast<std::uint16_t>(port)},
                                         {}, std::chrono::steady_clock::now() + 2s);
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

} // namespace
} // namespace troupe::testing
