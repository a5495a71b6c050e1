// The state of this process's membership in a world: who the members are, the member actor that
// talks to them, the threads that run their calls here, and what this member keeps for them.
#pragma once

#include "call_answer.hpp"
#include "call_executor.hpp"
#include "call_host.hpp"
#include "collective_numbers.hpp"
#include "direct_calls.hpp"
#include "group_names.hpp"
#include "host_barrier.hpp"
#include "key_owners.hpp"
#include "member_messages.hpp"
#include "member_roll.hpp"
#include "member_table.hpp"
#include "served_calls.hpp"
#include "world_callbacks.hpp"

#include "troupe/actors/network.hpp"
#include "troupe/world/world_options.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace troupe::detail {

/// How long a member joining the formed world tries to reach rank 0 before it holds rank 0 lost
/// (a few seconds cover a launcher that starts it beside the members that form the world).
inline constexpr auto late_join_grace = std::chrono::seconds{5};
/// How long one attempt of a member cut off from the world (world_options::rejoin) tries to
/// reach rank 0 before it gives up and, a pause later, tries again: what holds up stop().
inline constexpr auto rejoin_reach = std::chrono::seconds{2};

/// A member joins the world for the first time, or again, cut off from it (the same process,
/// a new member actor: world_options::rejoin).
enum class join_kind { first, again };

/// `options` as a world takes them (defaults filled in); invalid_argument naming what is wrong.
world_options checked(world_options options);

/// Asks rank 0 of the formed world `options` name for a free rank (options.rank is any_rank),
/// held for this member's name until it joins or the world's timeout passes; throws what rank 0
/// answers, or peer_lost if it cannot be reached (rank_request.cpp).
int request_rank(runtime_state& rt, const world_options& options);

/// world_core::send's `to` for the member that meets groups' rendezvous: rank 0, or with a
/// store whichever member coordinates when the request goes (and again when that one goes).
inline constexpr int coordinator_role = -3;

/// What joining through a store throws when this member's rank is another member's there.
class rank_taken : public invalid_argument {
public:
  explicit rank_taken(const std::string& message) : invalid_argument(message) {}
};

/// The lowest rank from world_size up that no member holds in the store of the world `options`
/// name (options.rank is any_rank): a joiner claims it, and tries the next if another member
/// claimed it first. Throws invalid_argument if the world is full, network_error if the store
/// does not answer (store_seat.cpp).
int free_store_rank(const world_options& options);

/// Throws invalid_argument, naming `whose` list, unless `devices` names 1 to 256 devices, each
/// once, as local_devices() names them (no '@', ',' or spaces; 64 bytes at most): a member's
/// own, and those another member sends when it joins.
void check_devices(const std::vector<std::string>& devices, const std::string& whose);

/// Tells the member actor to stop: fail what is pending, answer what is held, and quit. Local
/// only, like every message this process's own threads send it: no peer can send it.
struct stop_request {};
/// The member actor's own reminder to fail the requests past their deadline.
struct sweep_request {};
/// The member actor's own reminder to try reaching `rank` again.
struct reconnect {
  int rank = 0;
};
/// Rank 0's own reminder that the rank it held for `name` expires unless it has joined.
struct reservation_expiry {
  int rank = 0;
  std::string name;
};
/// The member actor's own reminder to try again the messages that wait for the store's news.
struct news_tick {};
/// This member withdrew its service (group, key) from the world's store: every member it has
/// reached forgets who offered it.
struct services_withdrawn {
  std::string group, key;
};
/// An executor thread finished call `id`, and answered it.
struct call_done {
  std::uint64_t id = 0;
};

class local_channel;
class store_seat;
struct store_location;
namespace etcd {
struct member_record;
}

class world_core : public call_host, public std::enable_shared_from_this<world_core> {
public:
  /// `callbacks`: what the membership's users gave, shared by its incarnations.
  world_core(runtime_state& rt, world_options options, std::shared_ptr<world_callbacks> callbacks);
  ~world_core() override;

  /// Forms the world (world.cpp's constructor), or joins it again; throws as world's
  /// constructor says. May run while another thread stops this core: it then throws.
  void join(join_kind kind = join_kind::first);
  void stop() noexcept;
  /// Stops this incarnation of the membership, which goes on as another: what is still made
  /// through it (its groups' calls) fails with state_error saying `why`.
  void retire(std::string why) noexcept;
  /// Whether this member lost rank 0 without its leaving (with a store: its lease): it is out
  /// of the world.
  bool cut_off() const noexcept { return cut_off_; }
  /// Whether the world keeps its tables in a store (world_options::store).
  bool with_store() const noexcept { return !options.store.empty(); }
  /// Requests this member sent its store for the world's tables (0 without one).
  std::uint64_t store_requests() const;

  /// Whether groups' barriers meet in shared memory (host_barrier.hpp): the whole world is on
  /// this host, and world_options::host_barriers.
  bool meets_on_host() const { return options.host_barriers && !loopback_host().empty(); }
  /// Whether stop() has begun here.
  bool has_stopped() const;
  /// Throws what a use after stop() throws (state_error; partition_error cut off from a store).
  [[noreturn]] void throw_as_stopped() const;

  /// Arrives at barrier `n` of `group` (of world ranks `ranks`) here: the result is set once
  /// every member has arrived. state_error once stopped.
  bytes_result arrive_at_barrier(const std::string& group, std::uint64_t n, std::vector<int> ranks);

  /// Sends `message` to member `to` through the member actor; its reply arrives in `reply` (a
  /// new result if null), which it returns. state_error once stopped.
  bytes_result send(int to, caf::message message, std::optional<std::chrono::milliseconds> timeout,
                    bytes_result reply = nullptr);

  /// Sends call `request` of group `group` to member `to`, its payload made: straight to it
  /// when it is reached and the call has no timeout (direct_calls.hpp), else through the member
  /// actor. Its reply arrives in `reply`, which it returns.
  bytes_result call(int to, const std::string& group, call_request request,
                    std::optional<std::chrono::milliseconds> timeout, bytes_result reply);

  /// Runs a call from another member on an executor thread, which answers it (or, for an
  /// actor's call, the actor's thread does once it has run), then tells the member actor that
  /// call `id` is done.
  void serve(std::uint64_t id, std::string group, incoming_call request, call_answer answer);
  // What the shared-memory channel needs (call_host.hpp).
  void post(std::function<void()> work) override;
  served run(const std::string& group, incoming_call& request, const late_answer& later) override;
  late_answer late_local_answer(int rank, std::uint64_t id) override;
  std::string label(int rank) const override;
  /// The name of the member of `rank`; empty if none holds it.
  std::string member_name(int rank) const;

  /// Asks rank 0 (with a store: the store) for `op` on `table` of `group`'s keys, waiting for
  /// its answer (the world's timeout bounds a rank 0 that froze); throws what it answers.
  reply_bytes ask_keys(key_operation op, key_table table, const std::string& group,
                       const std::string& key);

  /// Sends a call through the shared-memory inbox of `rank` when it is on this host, its reply
  /// to arrive in `reply`; false (nothing sent) when `rank` is not reachable that way.
  bool local_call(int rank, const std::string& group, call_request& request,
                  const bytes_result& reply);

  // Called by the member actor.
  /// Every member is known (and `names` is filled in): the constructor may return.
  void formed() noexcept;
  void formation_failed(std::exception_ptr why) noexcept;
  void joined(int rank, const std::string& name, const caf::node_id& node);
  /// Member `name` joined the formed world as `rank` (or joined it again): the users' callbacks.
  void member_joined(const std::string& name, int rank) noexcept;
  /// `rank` is gone (`left`: on purpose): members() and size() leave it out from now on. The
  /// member actor says so first thing when it loses a member (before the calls it holds for it
  /// fail, so that their callers see it gone; a call through the inboxes may see a member's end
  /// a moment earlier), and for the members the roster says were gone before this one joined.
  void mark_gone(int rank, bool left);
  /// `rank` is gone (mark_gone said so first): `why` says how; `left` if it said it was leaving
  /// (not reported lost). What this member held of it goes, and the callbacks run.
  void peer_gone(int rank, const std::string& why, bool left) noexcept;
  /// `rank`, gone, joined again as a new process.
  void member_returned(int rank);
  /// This member is out of the world: it lost rank 0 (not by leaving), or with a store its
  /// lease (`why` says how); with world_options::rejoin, its membership makes a new
  /// incarnation.
  void lost_the_world(const std::string& why) noexcept;
  /// With a store: this member's lease is gone (`why` says so): what waits on the shared-memory
  /// inboxes fails with partition_error, and it is out of the world.
  void partitioned(const std::string& why) noexcept;

  /// What troupe itself runs when a member is lost (a supervised actor's restart), for this
  /// incarnation only; users' callbacks are the membership's (world_callbacks).
  void add_lost_callback(std::function<void(const std::string&, int)> callback);
  /// The members that are neither lost nor gone, in rank order, and how many they are.
  std::vector<std::string> live_members();
  int live_count() const noexcept;
  /// The same members' names, sorted, and their ranks, in rank order.
  std::vector<std::string> live_members_by_name();
  std::vector<int> live_ranks();
  /// The rank of member `name` unless it is gone (or no member has the name).
  std::optional<int> live_rank_of(std::string_view name);
  /// The first of `ranks` that is gone, if any, one that was lost before one that left (which
  /// may have left because of the loss): what a wait that needs them all checks so that it
  /// fails with peer_lost instead of waiting out its timeout.
  std::optional<int> first_gone(const std::vector<int>& ranks);

  /// The address members on other hosts reach this one at: the local address of its
  /// connection to rank 0 (rank 0: of a member's connection to it). Empty if unknown.
  std::string address_seen_by_others();
  /// The loopback host every member listens on when the whole world is on this host (rank 0's
  /// address, or every store server, on loopback); empty when members may be on other hosts.
  std::string loopback_host() const;

  /// What this member's connections prove: the world's secret, and its name; `peer_name` is
  /// the member a connection must reach.
  link_policy link(std::string peer_name = {}) const;

  runtime_state& rt;
  const world_options options;
  const endpoint rank0_address;
  const bool tls;
  member_table members{options.max_world_size}; // the roster, once formed, and who joined since
  std::string world_id; // made by rank 0: names this world's inboxes
  caf::actor member;
  direct_calls direct{static_cast<std::size_t>(options.max_world_size)};
  /// The actor served calls' answers come from (call_answer.hpp says why).
  caf::strong_actor_ptr answerer() const;

  /// What this member runs for the others, and holds for them.
  served_calls calls{rt, options.rank, options.timeout, [this](int rank) { return label(rank); },
                     [this](key_operation op, const std::string& group, const std::string& key) {
                       (void)ask_keys(op, key_table::paired, group, key);
                     }};

  /// Who holds the keys this member has looked up (asked of rank 0 once).
  detail::key_owners key_owners;

  collective_numbers collective_groups; // made so far here, of each set of ranks

  group_names groups; // created here and not destroyed
  host_barriers barriers_on_host; // their barriers' objects, when the world is on one host

private:
  /// Served call `id` has been answered: the member actor stops counting it.
  void call_finished(std::uint64_t id) noexcept;
  void join_rank0(std::chrono::steady_clock::time_point deadline, join_kind kind);
  /// Joins the world through its store (world_options::store): claims this member's rank there
  /// and waits until the world has formed.
  void join_store(std::chrono::steady_clock::time_point deadline);
  reply_bytes store_keys(key_operation op, key_table table, const std::string& group,
                         const std::string& key);
  /// This member's seat in the store at `where`, tried until `deadline`; network_error if no
  /// server answered by then.
  std::shared_ptr<store_seat> reach_store(const store_location& where,
                                          std::chrono::steady_clock::time_point deadline);
  /// Claims this member's rank and name in `store`, trying again for three leases' TTLs while they
  /// are held (by this member's previous process, maybe); throws what the last try threw.
  void claim_in_store(store_seat& store, const etcd::member_record& record, bool formed_before);
  /// With a store: the founders (ranks below world_size) that have not claimed their ranks.
  std::string missing_from_store() const;
  /// Connects to rank 0; peer_lost if a member joining the formed world (or joining it again)
  /// cannot reach it.
  caf::actor reach_rank0(std::chrono::steady_clock::time_point deadline, join_kind kind);
  /// Spawns the member actor and publishes it, unless stop() came first (state_error).
  void open_member(const endpoint& listen);
  reply_bytes ask_while_forming(int rank, const caf::actor& peer, caf::message message,
                                std::chrono::steady_clock::time_point deadline);
  void await_formation(std::chrono::steady_clock::time_point deadline);
  void open_inbox();
  void member_lost(int rank) noexcept;
  /// Answers call `id` of `rank`, made through the shared-memory inboxes, late.
  void answer_local_call(int rank, std::uint64_t id, served outcome) noexcept;

  /// What a use after stop() throws, saying why: partition_error if this incarnation ended cut
  /// off from its world's store, else state_error. Called under stop_mutex.
  [[noreturn]] void throw_stopped() const;

  /// stop_grace is over with calls still running: stop returns, they finish on their own.
  void let_running_calls_finish() noexcept;

  mutable std::shared_mutex stop_mutex; // send() shares it; stop() takes it alone (the only lock)
  bool stopped_ = false;
  std::string stopped_why_ = "the world has stopped"; // what a call after stop() throws
  const std::shared_ptr<world_callbacks> callbacks_;
  std::atomic<bool> cut_off_{false};
  /// With world_options::store: made by join(), ended by stop() once the member actor has
  /// (a thread asking it for keys holds it meanwhile).
  std::shared_ptr<store_seat> store_;
  std::uint16_t port_ = 0;
  caf::node_id rank0_node_; // a member's: the process it joined through
  std::atomic<bool> dropping_queued_{false};
  call_executor executor_;
  std::unique_ptr<caf::scoped_actor> answerer_; // its mailbox closed: nobody sends to it
  std::unique_ptr<local_channel> channel_;
  std::shared_ptr<result_state<int>> formation_ = std::make_shared<result_state<int>>();
  joined_members joined_; // rank 0: who has joined so far
  gone_members gone_;
};

/// The member actor: one per member, published for the others to reach.
caf::actor spawn_member(world_core& core);

} // namespace troupe::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::stop_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::sweep_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::reconnect)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::call_done)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::reservation_expiry)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::services_withdrawn)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::news_tick)
