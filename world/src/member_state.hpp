// The member actor's state (member_actor.cpp has the actor, member_handlers.hpp its handlers),
// and what more than one part of its protocol uses: who sent a message, reaching and losing
// members (member_peers.cpp), and the barriers a loss or a stop ends (member_barriers.cpp).
// Every function here runs on the member actor, with `self` its own.
#pragma once

#include "barrier_tree.hpp"
#include "call_answer.hpp"
#include "coordinator.hpp"
#include "peer_table.hpp"
#include "pending_requests.hpp"
#include "roster.hpp"
#include "store_news.hpp"
#include "world_core.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace troupe::detail {

/// A member asking rank 0 to join, waiting for the whole world (or, joining the formed world,
/// for the members there to learn of it).
struct pending_join {
  std::string name;
  std::string host;
  std::uint16_t port = 0;
  std::vector<std::string> devices;
  caf::actor handle;
  reply_promise promise;
  std::size_t unanswered = 0; // members not yet told of it (joining the formed world)
};

struct member_state {
  world_core* core = nullptr;
  peer_table peers; // by rank, once connected; this member's own at its rank
  std::vector<endpoint> addresses; // by rank, from the roster: where to connect on first use
  /// Requests (their ids in `pending`) to members not reached yet, by rank.
  std::map<int, std::vector<std::pair<std::uint64_t, caf::message>>> awaiting_peer;
  std::map<int, int> connect_failures; // attempts to reach a rank that failed in a row
  std::set<int> greet_when_reached; // lower ranks that asked this member to connect
  std::vector<bool> lost;
  std::vector<bool> left; // said it was leaving: its end is no loss to report
  bool roster_known = false;
  bool ready = false;
  pending_requests pending; // requests this member sent
  std::optional<pending_requests::clock::time_point> sweep_at; // the next sweep scheduled
  struct served_call {
    call_answer answer;
    int from = 0;
  };
  std::map<std::uint64_t, served_call> serving; // calls running on the executor, and whose
  std::vector<std::size_t> serving_from; // how many of them each member made
  std::uint64_t next_serving = 0;
  std::map<int, pending_join> joins; // rank 0, while the world forms
  std::map<int, pending_join> late_joins; // rank 0: joins of ranks from world_size up, in progress
  std::map<int, std::string> reserved; // rank 0: ranks given to joiners that asked for any, by rank
  std::map<int, std::uint32_t> incarnations; // rank 0: how often each rank joined again
  /// The incarnation each member that joined the formed world is: a message proving its name
  /// from another (its old process or member actor, or a stranger) is not taken for it.
  std::map<int, member_identity> joined_as;
  int unknown_addresses = 0; // rank 0: joins whose address is still being looked up
  coordinator groups; // rank 0
  barrier_table barriers; // the groups' barriers in progress here
  // A world with a store (member_store.cpp): the members as the store's news told them, by
  // rank, and the member that coordinates (rank 0 without a store).
  std::map<int, etcd::member_record> records;
  bool claimed = false; // this member's rank is claimed in the store
  bool formed_before = false; // the world had formed when it was
  bool partitioned = false; // this member's lease is gone: it is out of the world
  int coordinating = 0; // the coordinator's rank
  /// With a store: requests to the coordinator, whichever member it is (coordinator_role), by
  /// id: the message, and the rank it went to (-1: it waits for a coordinator to go to). When
  /// the coordinator goes, they go again to the next, which meets them anew.
  struct coordinator_request {
    caf::message message;
    int sent_to = -1;
  };
  std::map<std::uint64_t, coordinator_request> for_coordinator;
  /// Senders whose messages wait (caf::skip) for the store's news of them, since when.
  std::map<caf::node_id, std::chrono::steady_clock::time_point> awaited_news;
  bool news_tick_due = false;
  static inline const char* name = "troupe.member";
};

using member_actor = caf::stateful_actor<member_state>;

// member_formation.cpp
/// Rank 0: why a member at the door (a join, or a joiner's question for a rank) is refused
/// before its claims are weighed, if it is: another troupe build's wire version, or a
/// connection that proved another name than it claims.
std::optional<std::string> stranger_refusal(member_actor* self, std::uint32_t version,
                                            const std::string& name);
/// Rank 0: why member `name`, expecting a world of `size` members and at most `max_size`, is
/// refused, if this is another world.
std::optional<std::string> other_world_refusal(member_actor* self, const std::string& name,
                                               int size, int max_size);
/// Rank 0: the address a joining member (`rank`, of process `node`) that listens beyond
/// loopback connected from, where the others are to reach it: `found` with it, or `failed`.
void look_up_host(member_actor* self, int rank, const caf::node_id& node,
                  std::function<void(std::string)> found,
                  std::function<void(network_error)> failed);
/// Rank 0: the roster as it stands, for a member that joins (`incarnation`: roster.hpp).
wire_bytes roster_now(member_actor* self, std::uint32_t incarnation = 1);
/// `devices`, checked as the devices of member `name`; nullopt (and `why`) if they are no list.
std::optional<std::vector<std::string>>
checked_devices(const std::string& name, std::vector<std::string> devices, std::string& why);

// member_joining.cpp
/// Rank 0: a member of rank world_size or more asks to join; taken in once the world has formed
/// and every member there has learnt of it, or refused.
reply_result accept_late_join(member_actor* self, join_fields& join, join_details& details);
/// Rank 0, once formed: takes in the members that asked to join meanwhile.
void take_in_waiting(member_actor* self);
/// `rank`, gone, joined again as `incarnation`: it is a member again, reached anew.
void take_back(member_actor* self, int rank, const member_identity& incarnation);

// member_barriers.cpp
/// This member stops: every barrier in progress here ends.
void barriers_stopped(member_actor* self, const std::string& why);

// member_store.cpp
/// Whether a message from `identity` may be taken as from member `rank`: it is the incarnation
/// the world took in (rank 0 told of, or the store holds), or the world knows none.
bool is_incarnation(member_actor* self, int rank, const member_identity& identity);
/// With a store: whether the message being handled waits for the store's news that this member
/// has not had yet (of its sender, which joined a moment ago, or of a member it names, which
/// joined again): its handler returns caf::skip, and CAF tries it again after the next message
/// (news, or a tick within 200 ms), for 3 s at most from the sender's first wait; then it is
/// taken as this member sees things.
bool awaits_news(member_actor* self);
/// With a store: whether one of `ranks` is gone here while the message that names them may know
/// better (the store's news of a member that joined again reach members one by one).
bool names_a_member_gone_here(member_actor* self, const std::vector<int>& ranks);
/// Whether a message from `from` (sender_rank's answer) waits: its sender is not known here yet,
/// and this member waits for the roster that names it, or for the store's news of it.
bool sender_awaited(member_actor* self, int from);
/// The rank of the member that sent the message being handled (-1: none known here), or nothing
/// while it waits for the roster or the store's news that name its sender (sender_awaited): a
/// member that formed first may call one whose roster is still on its way from its join. Asked
/// before a handler moves a field out of the message.
std::optional<int> sender_unless_awaited(member_actor* self);
/// Reaches `rank`, a higher rank, through the coordinator: it asks `rank` to connect here.
void reach_through_coordinator(member_actor* self, int rank);

// member_peers.cpp: requests to the coordinator role, with a store.
/// Sends coordinator request `id` to the coordinator there is, unless it is lost here (the
/// store's news will name another).
void send_to_coordinator(member_actor* self, std::uint64_t id);
/// The coordinator requests that went to `rank` wait for the next coordinator.
void park_coordinator_requests(member_actor* self, int rank);
/// Every coordinator request that waits goes to the coordinator there is now.
void resend_to_coordinator(member_actor* self);

// member_peers.cpp
/// Connects to the lower `rank` (member_peers.cpp says why only a higher rank connects).
void connect_to(member_actor* self, int rank);
/// The name the sender's process proved when it connected (its handshake; with TLS, its
/// certificate), or nullopt if it did not come over a connection.
std::optional<std::string> proven_name(member_actor* self);
/// The rank of the member whose process sent the message being handled, or -1 (adopting a
/// member it has no handle for yet: see member_peers.cpp).
int sender_rank(member_actor* self);
/// Settles `reply` with a member's answer.
void complete(const bytes_result& reply, std::uint8_t status, const std::string& text,
              wire_bytes& payload);
/// Formed once the roster is known and rank 0 reached (on rank 0: once everyone joined).
void check_ready(member_actor* self);
/// `rank` is reached: monitored from now on, and what waited for it goes.
void add_peer(member_actor* self, int rank, caf::actor handle);
/// `rank` is gone (down, or rank 0 says so): what is pending on it fails.
void on_lost(member_actor* self, int rank);

} // namespace troupe::detail
