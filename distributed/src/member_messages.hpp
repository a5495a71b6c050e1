// What members of a world say to each other (over BASP) and what a member's own threads say to
// its member actor. Every reply between members is (status, text, payload): a failure travels as
// a status and a message, never as a CAF error the other side would have to decode.
#pragma once

#include "troupe/distributed/detail/group_calls.hpp"

#include <caf/all.hpp>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace troupe::detail {

using join_atom = caf::atom_constant<caf::atom("join")>; // a member to rank 0
using call_atom = caf::atom_constant<caf::atom("call")>; // a call (call_request)
using answer_atom = caf::atom_constant<caf::atom("answer")>; // to a one-way call
using group_atom = caf::atom_constant<caf::atom("group")>; // rank 0: a group's rendezvous
using key_atom = caf::atom_constant<caf::atom("key")>; // rank 0: the key tables
using leave_atom = caf::atom_constant<caf::atom("leave")>; // a member stops on purpose
using withdrawn_atom = caf::atom_constant<caf::atom("withdrawn")>; // rank 0: a service's key went
using gone_atom = caf::atom_constant<caf::atom("gone")>; // rank 0: a member was lost, or left
using reach_atom = caf::atom_constant<caf::atom("reach")>; // to rank 0, and from it: connect
using greet_atom = caf::atom_constant<caf::atom("greet")>; // a member that connected as asked

/// What members say to each other, in version: bumped whenever a message or its payload
/// changes, so that members of different troupe builds refuse each other at the door rather than
/// misread each other later.
inline constexpr std::uint32_t wire_version = 5;

enum class reply_status : std::uint8_t {
  ok,
  invalid_argument,
  key_error,
  state_error,
  serialization_error,
  peer_lost,
};

/// The exception a failed reply stands for.
std::exception_ptr exception_for(reply_status status, const std::string& text);

using wire_bytes = std::vector<char>;
using reply_promise = caf::typed_response_promise<std::uint8_t, std::string, wire_bytes>;
using reply_result = caf::result<std::uint8_t, std::string, wire_bytes>;

wire_bytes to_wire(const bytes& payload);
std::span<const std::byte> from_wire(const wire_bytes& payload);

/// A request one of this process's threads asks the member actor to send to member `to`, and
/// where its reply goes. Local only: it holds a pointer.
struct outgoing_request {
  int to = 0;
  caf::message message;
  std::optional<std::chrono::milliseconds> timeout;
  bytes_result reply;
};

/// Rank 0, reached by a joining member: monitored from now on.
struct early_peer {
  int rank = 0;
  caf::actor handle;
};

/// Every member's name and address, once rank 0 has told them.
struct roster_adoption {
  std::vector<std::string> names;
  std::vector<std::string> hosts;
  std::vector<std::uint16_t> ports;
};

} // namespace troupe::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::outgoing_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::roster_adoption)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::early_peer)
