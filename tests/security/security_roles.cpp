// The roles the world security tests' member processes play: members (with TLS from
// TROUPE_TEST_CERTS, the secret from TROUPE_SECRET) and strangers that reach rank 0 without
// being members.
#include "world_security_support.hpp"

#include "member_messages.hpp"
#include "roster.hpp"

#include "troupe/actors/network.hpp"
#include "troupe/actors/runtime_state.hpp"

#include "transport.hpp"

#include <cstdlib>

namespace troupe::testing {

troupe::tls_options tls_of(const std::string& folder, const std::string& name) {
  return {folder + "/" + name + ".pem", folder + "/" + name + ".key", folder + "/ca.pem", {}};
}

void make_certs(const std::string& folder, const std::string& names) {
  const auto command = std::string{TROUPE_MAKE_CERTS} + " " + folder + " " + names;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

world_with_a_server::world_with_a_server()
  : server("patient_server", member_environment(1, 2, port)), world(rt, member_options(0, 2, port)),
    group(world.create_rpc_group("all", world.members())) {
  group.barrier();
}

bool becomes_true(const std::atomic<bool>& flag, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!flag && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(20ms);
  return flag;
}

void expect_tls_member_refused(const std::string& folder, const std::string& cert) {
  troupe::runtime rt;
  const int port = free_port();
  auto environment = member_environment(1, 2, port);
  environment["TROUPE_TEST_CERTS"] = folder;
  environment["TROUPE_TEST_CERT_NAME"] = cert;
  member_process joiner{"joining_member", environment};
  auto options = member_options(0, 2, port);
  options.tls = tls_of(folder, "0");
  options.timeout = 4s;
  EXPECT_THROW((troupe::world{rt, options}), troupe::timeout_error);
  EXPECT_EQ(joiner.exit_code(10s), 3);
}

namespace {

/// Options from the environment, with TLS from TROUPE_TEST_CERTS (the certificate named by
/// TROUPE_TEST_CERT_NAME, else by the member's name) and the secret from TROUPE_SECRET.
troupe::world_options options_from_environment() {
  auto options = troupe::world_options::from_environment();
  options.timeout = 20s;
  if (const char* folder = std::getenv("TROUPE_TEST_CERTS"); folder && *folder) {
    const char* cert = std::getenv("TROUPE_TEST_CERT_NAME");
    options.tls = tls_of(folder, cert && *cert ? cert : options.name);
  }
  return options;
}

/// What a stranger holds: a runtime of its own and rank 0's member actor, reached with the name
/// `name` and no secret.
struct stranger_at_rank_0 {
  explicit stranger_at_rank_0(const std::string& name)
    : rank0(troupe::detail::connect(
        state(), troupe::detail::parse_endpoint(std::getenv("TROUPE_ADDRESS"), "address"),
        {.name = name}, std::chrono::steady_clock::now() + 10s)) {}
  troupe::detail::runtime_state& state() { return troupe::runtime_state_of(rt); }

  troupe::runtime rt;
  caf::actor rank0;
};

} // namespace

/// Rank 2 leaves right after the first barrier; rank 1 waits for rank 0 (which meanwhile lets a
/// stranger connect and close) and then calls it: exits 5 if any member but rank 2 was lost.
TROUPE_ROLE(steady_member) {
  return refused_or_lost_code([] {
    troupe::runtime rt;
    troupe::world world{rt, options_from_environment()};
    std::atomic<bool> other_lost{false};
    world.on_member_lost([&](const std::string& name, int) {
      if (name != "2")
        other_lost = true;
    });
    auto all = world.create_rpc_group("all", world.members());
    all.barrier();
    if (world.rank() == 2)
      return;
    auto pair = world.create_rpc_group("pair", {"0", "1"});
    require(pair.rpc_sync("0", add_numbers, 2, 3) == 5, "a call to rank 0 after rank 2 left");
    pair.barrier();
    if (other_lost)
      std::exit(5);
  });
}

/// Keeps a 64 MiB outcome on rank 0 (a remote reference), says so with a barrier, and waits to
/// be killed.
TROUPE_ROLE(keeper) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("all", world.members());
    group.barrier();
    auto block = group.remote("0", make_block, 64);
    group.barrier();
    std::this_thread::sleep_for(60s);
  });
}

/// Joins and waits; exits 3 if refused.
TROUPE_ROLE(joining_member) {
  return refused_or_lost_code([] {
    troupe::runtime rt;
    troupe::world world{rt, options_from_environment()};
    world.create_rpc_group("all", world.members()).barrier();
  });
}

/// Serves the others' calls until the test kills it.
TROUPE_ROLE(patient_server) {
  return as_member([](troupe::world& world) {
    world.create_rpc_group("all", world.members()).barrier();
    std::this_thread::sleep_for(60s);
  });
}

/// A process that is no member: reaches rank 0 (no secret is set, so it gets past the
/// handshake) and asks it to run a task. Exits 0 if rank 0 refused the call as a non-member's,
/// 1 if it ran it, 2 if no answer came.
TROUPE_ROLE(stranger_caller) {
  const char* claimed = std::getenv("TROUPE_STRANGER_NAME"); // a member's name, maybe
  stranger_at_rank_0 stranger{claimed ? claimed : "stranger"};
  caf::scoped_actor self{*stranger.state().system};
  int code = 2;
  self
    ->request(stranger.rank0, 5s, troupe::detail::call_atom::value,
              static_cast<std::uint8_t>(troupe::detail::call_kind::task), std::string{"g"},
              std::string{}, std::string{"add_numbers"}, std::string{},
              troupe::detail::to_wire(troupe::serialize(std::tuple{1, 2})))
    .receive(
      [&](std::uint8_t status, std::string& text, troupe::detail::wire_bytes&) {
        std::cerr << "rank 0 answered: " << text << "\n";
        code = status == static_cast<std::uint8_t>(troupe::detail::reply_status::state_error) &&
                   text.find("members only") != std::string::npos
                 ? 0
                 : 1;
      },
      [](caf::error&) {});
  return code;
}

/// A process that is no member sends rank 0 a one-way call (the way members call each other
/// directly). Exits 0 if rank 0 answered that call as a non-member's, 1 if it ran it, 2 if no
/// answer came.
TROUPE_ROLE(stranger_direct_caller) {
  stranger_at_rank_0 stranger{"stranger"};
  caf::scoped_actor self{*stranger.state().system};
  constexpr std::uint64_t call_id = 5;
  self->send(stranger.rank0, troupe::detail::call_atom::value, call_id,
             static_cast<std::uint8_t>(troupe::detail::call_kind::task), std::string{"g"},
             std::string{}, std::string{"add_numbers"}, std::string{},
             troupe::detail::to_wire(troupe::serialize(std::tuple{1, 2})));
  int code = 2;
  self->receive(
    [&](troupe::detail::answer_atom, std::uint64_t id, std::uint8_t status, std::string& text,
        troupe::detail::wire_bytes&) {
      std::cerr << "rank 0 answered call " << id << ": " << text << "\n";
      code = id == call_id &&
                 status == static_cast<std::uint8_t>(troupe::detail::reply_status::state_error) &&
                 text.find("members only") != std::string::npos
               ? 0
               : 1;
    },
    caf::after(5s) >> [] {});
  return code;
}

/// A process that is no member sends rank 0 answers to the calls it may have in flight, each
/// saying the result is 7.
TROUPE_ROLE(stranger_answerer) {
  stranger_at_rank_0 stranger{"stranger"};
  caf::scoped_actor self{*stranger.state().system};
  for (std::uint64_t id = 0; id < 1024; ++id)
    self->send(stranger.rank0, troupe::detail::answer_atom::value, id,
               static_cast<std::uint8_t>(troupe::detail::reply_status::ok), std::string{},
               troupe::detail::to_wire(troupe::serialize(7)));
  std::this_thread::sleep_for(300ms);
  return 0;
}

/// A process that is no member (claiming member 1's name) tells rank 0 that a member "evil"
/// joined, as only rank 0 may tell a member. Exits 0 if refused saying so, 1 if taken, 2 if no
/// answer came.
TROUPE_ROLE(stranger_announcer) {
  stranger_at_rank_0 stranger{"1"};
  caf::scoped_actor self{*stranger.state().system};
  int code = 2;
  self
    ->request(stranger.rank0, 5s,
              troupe::detail::joined_message::make(
                1, "evil",
                troupe::detail::to_wire(troupe::serialize(std::vector<std::string>{"cpu"})),
                "127.0.0.1", 1, stranger.state().system->node(), std::uint64_t{1}))
    .receive(
      [&](std::uint8_t status, std::string& text, troupe::detail::wire_bytes&) {
        std::cerr << "rank 0 answered: " << text << "\n";
        code = status == static_cast<std::uint8_t>(troupe::detail::reply_status::state_error) &&
                   text.find("only rank 0 says who joined") != std::string::npos
                 ? 0
                 : 1;
      },
      [](caf::error&) {});
  return code;
}

/// A process that is no member (claiming member 1's name) arrives at rank 0's rendezvous of a
/// group of all members as member 1, and with a name too long to keep: exits 0 if both are
/// refused saying why, 1 if either is taken, 2 if no answer came.
TROUPE_ROLE(stranger_at_a_group_of_all_members) {
  stranger_at_rank_0 stranger{"1"};
  caf::scoped_actor self{*stranger.state().system};
  const auto refusal = [&](const std::string& what) {
    std::string text = "no answer";
    self
      ->request(stranger.rank0, 5s,
                troupe::detail::presence_rendezvous_message::make(
                  what, static_cast<std::uint8_t>(troupe::detail::presence_round::once), 1))
      .receive(
        [&](std::uint8_t status, std::string& said, troupe::detail::wire_bytes&) {
          text =
            status == static_cast<std::uint8_t>(troupe::detail::reply_status::ok) ? "taken" : said;
        },
        [](caf::error&) {});
    std::cerr << "rank 0 answered: " << text << "\n";
    return text;
  };
  const auto as_member = refusal("group 'elastic'");
  const auto too_long = refusal(std::string(600, 'g'));
  if (as_member == "no answer" || too_long == "no answer")
    return 2;
  return as_member.find("must come from that member") != std::string::npos &&
             too_long.find("over the limit of 512") != std::string::npos
           ? 0
           : 1;
}

/// A process that joins a formed world of one (at most two) with a raw join asking for rank 5,
/// its details right: exits 0 if rank 0 refuses it naming the rank and the ranks there are, 1
/// otherwise, 2 if no answer came.
TROUPE_ROLE(stranger_beyond_the_world) {
  stranger_at_rank_0 stranger{"stranger"};
  auto member = stranger.state().system->spawn([] { return caf::behavior{[](std::int32_t) {}}; });
  caf::scoped_actor self{*stranger.state().system};
  int code = 2;
  self
    ->request(stranger.rank0, 5s,
              troupe::detail::join_message::make(
                troupe::detail::wire_version, "stranger", 5, 1, 1, "127.0.0.1", member,
                troupe::detail::to_wire(troupe::detail::encode_join_details({{"cpu"}, 2}))))
    .receive(
      [&](std::uint8_t, std::string& text, troupe::detail::wire_bytes&) {
        std::cerr << "rank 0 answered: " << text << "\n";
        code = text.find("asks for rank 5, outside 1..1") != std::string::npos ? 0 : 1;
      },
      [](caf::error&) {});
  caf::anon_send_exit(member, caf::exit_reason::user_shutdown);
  return code;
}

/// A process that is no member tells rank 0 that member 1 is leaving, as member 1 would.
TROUPE_ROLE(stranger_leaver) {
  stranger_at_rank_0 stranger{"1"};
  caf::scoped_actor self{*stranger.state().system};
  self->send(stranger.rank0, troupe::detail::leave_atom::value, std::int32_t{1});
  std::this_thread::sleep_for(300ms);
  return 0;
}

/// Reaches a listener at TROUPE_TEST_PORT that proves the secret in troupe's handshake and then
/// never answers CAF's, gives up, and ends its runtime. Exits 0 if the connect timed out and the
/// runtime ended (a runtime that cannot end keeps the process alive), 1 if it connected.
TROUPE_ROLE(connects_to_a_silent_peer) {
  troupe::runtime rt;
  const auto port = static_cast<std::uint16_t>(std::stoi(std::getenv("TROUPE_TEST_PORT")));
  try {
    troupe::detail::connect(troupe::runtime_state_of(rt), {"127.0.0.1", port},
                            {.secret = "quiet", .name = "joiner"},
                            std::chrono::steady_clock::now() + 2s);
  } catch (const troupe::timeout_error& e) {
    std::cerr << "gave up: " << e.what() << "\n";
    return 0;
  }
  return 1;
}

/// Starts a connection to the listener at TROUPE_TEST_PORT, as a member reaching another does,
/// and ends its runtime while the handshake is in progress. Exits 0 once the runtime has ended.
TROUPE_ROLE(stops_during_a_handshake) {
  troupe::runtime rt;
  auto& transport = *troupe::runtime_state_of(rt).network;
  const auto port = static_cast<std::uint16_t>(std::stoi(std::getenv("TROUPE_TEST_PORT")));
  transport.intend(
    "127.0.0.1", port,
    {{.secret = "quiet", .name = "joiner"}, nullptr, std::chrono::steady_clock::now() + 10s});
  caf::anon_send(transport.actor(), caf::connect_atom::value, std::string{"127.0.0.1"}, port);
  std::this_thread::sleep_for(200ms); // the transport's actor is in the handshake now
  return 0;
}

} // namespace troupe::testing
