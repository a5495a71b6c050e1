// What members of a world say to each other (over BASP) and what a member's own threads say to
// its member actor. Every reply between members is (status, text, payload): a failure travels as
// a status and a message, never as a CAF error the other side would have to decode.
#pragma once

#include "troupe/actors/annotated.hpp"
#include "troupe/actors/detail/failure.hpp"
#include "troupe/world/detail/group_calls.hpp"

#include <caf/all.hpp>

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace troupe::detail {

using join_atom = caf::atom_constant<caf::atom("join")>; // a member to rank 0
using joined_atom = caf::atom_constant<caf::atom("joined")>; // rank 0: a member joined
using reserve_atom = caf::atom_constant<caf::atom("reserve")>; // to rank 0: any free rank
using call_atom = caf::atom_constant<caf::atom("call")>; // a call (call_request)
using answer_atom = caf::atom_constant<caf::atom("answer")>; // to a one-way call
using group_atom = caf::atom_constant<caf::atom("group")>; // rank 0: a group's rendezvous
using key_atom = caf::atom_constant<caf::atom("key")>; // rank 0: the key tables
using leave_atom = caf::atom_constant<caf::atom("leave")>; // a member stops on purpose
using withdrawn_atom = caf::atom_constant<caf::atom("withdrawn")>; // rank 0: a service's key went
using gone_atom = caf::atom_constant<caf::atom("gone")>; // rank 0: a member was lost, or left
using reach_atom = caf::atom_constant<caf::atom("reach")>; // to rank 0, and from it: connect
using greet_atom = caf::atom_constant<caf::atom("greet")>; // a member that connected as asked
using barrier_atom = caf::atom_constant<caf::atom("barrier")>; // to a parent in a barrier tree

/// What members say to each other, in version: bumped whenever a message or its payload
/// changes, so that members of different troupe builds refuse each other at the door rather than
/// misread each other later.
inline constexpr std::uint32_t wire_version = 12; // 12: a key's owner asked if it holds it

/// A reply's status on the wire: which of troupe's errors a failed reply is, its text the
/// message (CAF's sec is the same: a code on the wire, one error value on either side).
enum class reply_status : std::uint8_t {
  ok,
  invalid_argument,
  key_error,
  state_error,
  serialization_error,
  peer_lost,
};

/// The failure a reply of `status` with `text` stands for; none (failed() false) for ok.
failure reply_failure(std::uint8_t status, const std::string& text);

/// The status `why` travels as (reply_failure's inverse): ok when nothing failed; a failure of
/// another type than the five above travels as a state_error, its message saying what it was.
std::uint8_t wire_status(const failure& why);

using wire_bytes = std::vector<char>;
using reply_promise = caf::typed_response_promise<std::uint8_t, std::string, wire_bytes>;
using reply_result = caf::result<std::uint8_t, std::string, wire_bytes>;

/// A handler's answer: `payload`, nothing having failed.
reply_result ok_reply(wire_bytes payload = {});
/// A handler's answer: `why`.
reply_result failed_reply(const failure& why);
/// Answers a promise held for later: `why`, or (nothing failed) `payload`.
void deliver(reply_promise& promise, const failure& why, wire_bytes payload = {});

wire_bytes to_wire(const bytes& payload);
std::span<const std::byte> from_wire(const wire_bytes& payload);

/// One message members send each other: its atom and its fields, in order. Senders build it here
/// (make, send, send_from_outside) and the member actor takes it here (handler), so the two sides
/// cannot disagree on a field.
template <class Atom, class... Fields>
struct member_message {
  /// The message, for a request (world_core::send).
  static caf::message make(Fields... fields) {
    return caf::make_message(Atom::value, std::move(fields)...);
  }
  /// Sends it from inside actor `self`.
  template <class Self, class Handle>
  static void send(Self* self, const Handle& to, Fields... fields) {
    self->send(to, Atom::value, std::move(fields)...);
  }
  /// Sends it from a thread outside any actor, in the name of actor `as`.
  template <class As, class Handle>
  static void send_from_outside(const As& as, const Handle& to, Fields... fields) {
    send_as_from_outside(as, to, Atom::value, std::move(fields)...);
  }
  /// The member actor's handler for it: `on(self, fields...)`, each field as received, inside
  /// the handling scope every handler runs in (annotated.hpp).
  template <class Self, class On>
  static auto handler(Self* self, On on) {
    return [self, on](Atom, Fields&... fields) {
      const handling scope{self};
      return on(self, fields...);
    };
  }
  /// The same, the fields moved into the members of `Named` in order: for a message of so many
  /// fields that its handler reads them by name.
  template <class Named, class Self, class On>
  static auto named_handler(Self* self, On on) {
    return [self, on](Atom, Fields&... fields) {
      const handling scope{self};
      return on(self, Named{std::move(fields)...});
    };
  }
  /// The same for a message from a member: `sender(self)` first, with the message untouched,
  /// says who sent it (a rank, -1 for none known), or nothing while it must wait: that message is
  /// skipped (caf::skip) and tried again later, so its fields must still be there. Else
  /// `on(self, rank, named)`.
  template <class Named, class Self, class Sender, class On>
  static auto named_handler(Self* self, Sender sender, On on) {
    return
      [self, sender, on](Atom, Fields&... fields) -> decltype(on(self, 0, std::declval<Named>())) {
        const handling scope{self};
        const std::optional<int> from = sender(self);
        if (!from)
          return caf::skip;
        return on(self, *from, Named{std::move(fields)...});
      };
  }
};

// What members say to each other. The fields' names are the handlers' (member_handlers.hpp).
/// A member to rank 0: (wire_version, name, rank, world_size, port, advertised host, actor,
/// its join_details encoded (roster.hpp)). Its fields never change (only the details' do, with
/// wire_version), so that rank 0 can refuse a member of another version naming both.
using join_message =
  member_message<join_atom, std::uint32_t, std::string, std::int32_t, std::int32_t, std::uint16_t,
                 std::string, caf::actor, wire_bytes>;
/// join_message's fields, by name.
struct join_fields {
  std::uint32_t version = 0;
  std::string name;
  std::int32_t rank = 0;
  std::int32_t size = 0;
  std::uint16_t port = 0;
  std::string host;
  caf::actor handle;
  wire_bytes details;
};
/// Rank 0 to every member, when one joins the formed world (or joins it again, a new process
/// under its old name and rank): (its rank, its name, its devices encoded, the host and port it
/// is reached at, its process and its member actor's id there). Answered once taken in.
using joined_message = member_message<joined_atom, std::int32_t, std::string, wire_bytes,
                                      std::string, std::uint16_t, caf::node_id, std::uint64_t>;
/// joined_message's fields, by name.
struct joined_fields {
  std::int32_t rank = 0;
  std::string name;
  wire_bytes devices;
  std::string host;
  std::uint16_t port = 0;
  caf::node_id node;
  std::uint64_t actor = 0;
};
/// A member that joins the formed world at any rank asks rank 0 for one: (wire_version, its
/// name, world_size, max_world_size). Answered with the rank, encoded.
using reserve_message =
  member_message<reserve_atom, std::uint32_t, std::string, std::int32_t, std::int32_t>;
/// A member that stops on purpose tells every other: (its rank).
using leave_message = member_message<leave_atom, std::int32_t>;
/// To rank 0: connect me to (rank); from rank 0: (rank) asks you to connect to it.
using reach_message = member_message<reach_atom, std::int32_t>;
/// A member that connected as asked, to the one it reached.
using greet_message = member_message<greet_atom>;
/// Rank 0 to every member: (rank) was lost, or (left) on purpose.
using gone_message = member_message<gone_atom, std::int32_t, bool>;
/// A call as a request: (kind, group, key, name, type, payload); answered by its reply.
using call_message = member_message<call_atom, std::uint8_t, std::string, std::string, std::string,
                                    std::string, wire_bytes>;
/// call_message's fields, by name.
struct call_fields {
  std::uint8_t kind = 0;
  std::string group, key, name, type;
  wire_bytes payload;
};
/// A one-way call: (id, kind, group, key, name, type, payload); answered by an answer_message.
using one_way_call_message = member_message<call_atom, std::uint64_t, std::uint8_t, std::string,
                                            std::string, std::string, std::string, wire_bytes>;
/// one_way_call_message's fields, by name.
struct one_way_call_fields {
  std::uint64_t id = 0;
  std::uint8_t kind = 0;
  std::string group, key, name, type;
  wire_bytes payload;
};
/// The answer to a one-way call: (id, status, text, payload).
using answer_message =
  member_message<answer_atom, std::uint64_t, std::uint8_t, std::string, wire_bytes>;
/// To rank 0, a collective group's rendezvous, bringing what every member must agree on: (what,
/// ranks, rank, payload).
using checked_rendezvous_message =
  member_message<group_atom, std::string, wire_bytes, std::int32_t, wire_bytes>;
/// To rank 0, a rendezvous of the members present (a group that follows the world): (what,
/// presence_round, rank); answered as checked_rendezvous_message is.
using presence_rendezvous_message =
  member_message<group_atom, std::string, std::uint8_t, std::int32_t>;
/// What a rendezvous of the members present is: a group's creation, met once (a member that
/// comes later passes at once), or one of its barriers, met anew each time.
enum class presence_round : std::uint8_t { once, each };
/// To rank 0, its key tables: (operation, table, group, key, rank).
using key_message =
  member_message<key_atom, std::uint8_t, std::uint8_t, std::string, std::string, std::int32_t>;
/// Rank 0 to every member: the service (group, key) was withdrawn.
using withdrawn_message = member_message<withdrawn_atom, std::string, std::string>;
/// A member to its parent in a group's barrier tree (barrier_tree.hpp), once it and its
/// children have arrived: (group, barrier number, the group's world ranks, why it failed below,
/// empty if it did not). Answered when the whole group has arrived, or the barrier failed.
using barrier_message =
  member_message<barrier_atom, std::string, std::uint64_t, wire_bytes, std::string>;

/// A request one of this process's threads asks the member actor to send to member `to`, and
/// where its reply goes. Local only: it holds a pointer.
struct outgoing_request {
  int to = 0;
  caf::message message;
  std::optional<std::chrono::milliseconds> timeout;
  bytes_result reply;
  /// Sent even after rank 0 has left on purpose: a barrier's arrival, whose group may still
  /// meet without it (calls, which are the world's, are refused then).
  bool after_rank_0_left = false;
};

/// One of this process's threads arrives at barrier `n` of `group`, whose members are `ranks`;
/// `reply` is set once every member has. Local only: it holds a pointer.
struct barrier_arrival {
  std::string group;
  std::uint64_t n = 0;
  std::vector<int> ranks;
  bytes_result reply;
};

/// The answer this member's parent in a barrier tree gave: the barrier (group, number), and how
/// it ended. Local only: the member actor tells itself.
struct barrier_answer {
  std::pair<std::string, std::uint64_t> at;
  failure why;
};

/// A member lost, told to the barriers behind what came before the loss: a parent's answer
/// reaches this actor as a barrier_answer it sends itself when the reply comes, so a loss seen
/// in the messages right after that reply (the leaving root's goodbye and down message) would
/// otherwise fail a barrier already released. Local only: the member actor tells itself.
struct barrier_loss {
  int rank = 0;
  std::string why;
  bool left = false;
};

/// Rank 0, reached by a joining member: monitored from now on.
struct early_peer {
  int rank = 0;
  caf::actor handle;
};

/// Every member's name, address and devices, and which are gone (roster.hpp's gone_as), once
/// rank 0 has told them.
struct roster_adoption {
  std::vector<std::string> names;
  std::vector<std::string> hosts;
  std::vector<std::uint16_t> ports;
  std::vector<std::vector<std::string>> devices;
  std::vector<std::uint8_t> gone;
};

} // namespace troupe::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::outgoing_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::roster_adoption)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::barrier_arrival)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::barrier_answer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::barrier_loss)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::early_peer)
