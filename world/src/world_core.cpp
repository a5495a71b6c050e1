#include "world_core.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "world_actor.hpp"

#include "local_channel.hpp"
#include "roster.hpp"
#include "store_seat.hpp"

#include "troupe/actors/annotated.hpp"

#include "troupe/actors/detail/tensor_store.hpp"
#include "troupe/actors/peer_proof.hpp"
#include "troupe/actors/serialization.hpp"
#include "troupe/actors/task.hpp"

#include <algorithm>
#include <iostream>
#include <thread>

namespace troupe::detail {

namespace {

using clock = std::chrono::steady_clock;

/// The most members a world may have: every member keeps a few tables of this many rows.
constexpr int max_members = 1 << 16;

} // namespace

world_options checked(world_options options) {
  if (options.world_size < 1)
    throw invalid_argument("world_options::world_size must be at least 1, got " +
                           std::to_string(options.world_size));
  if (options.max_world_size == -1)
    options.max_world_size = options.world_size;
  if (options.max_world_size < options.world_size || options.max_world_size > max_members)
    throw invalid_argument("world_options::max_world_size must be in " +
                           std::to_string(options.world_size) + ".." + std::to_string(max_members) +
                           " (world_size up to " + std::to_string(max_members) + "), got " +
                           std::to_string(options.max_world_size));
  if (options.rank == any_rank && options.max_world_size == options.world_size)
    throw invalid_argument("world_options::rank: a member may ask for any rank only to join a "
                           "formed world (max_world_size above world_size)");
  if (options.rank == any_rank && options.name.empty())
    throw invalid_argument("world_options::rank: a member that asks for any rank needs a name");
  if (options.rank != any_rank && (options.rank < 0 || options.rank >= options.max_world_size))
    throw invalid_argument("world_options::rank must be in 0.." +
                           std::to_string(options.max_world_size - 1) + " (or any_rank), got " +
                           std::to_string(options.rank));
  if (options.rpc_threads < 1)
    throw invalid_argument("world_options::rpc_threads must be at least 1, got " +
                           std::to_string(options.rpc_threads));
  if (options.timeout <= std::chrono::milliseconds{0})
    throw invalid_argument("world_options::timeout must be positive");
  if (options.stop_grace < std::chrono::milliseconds{0})
    throw invalid_argument("world_options::stop_grace must not be negative");
  if (options.name.empty())
    options.name = "rank-" + std::to_string(options.rank);
  if (options.name.size() > 255)
    throw invalid_argument("world_options::name may have 255 bytes at most, got " +
                           std::to_string(options.name.size()));
  if (options.max_message_bytes < (std::size_t{1} << 16))
    throw invalid_argument("world_options::max_message_bytes must be at least 65536, got " +
                           std::to_string(options.max_message_bytes));
  if (!options.store.empty())
    (void)parse_store_location(options.store); // invalid_argument naming what is wrong
  if (options.devices.empty())
    options.devices = {"cpu"};
  check_devices(options.devices, "world_options::devices");
  return options;
}

namespace {

/// Where this member listens: rank 0 at the world's address; the others on loopback when the
/// world is on one host, else on every interface (reached at the address rank 0 sees).
endpoint listen_address(const world_options& options, const endpoint& rank0) {
  if (options.rank == 0)
    return rank0;
  return {is_loopback(rank0.host) ? rank0.host : "0.0.0.0", 0};
}

} // namespace

void check_devices(const std::vector<std::string>& devices, const std::string& whose) {
  constexpr std::size_t max_devices = 256, max_name = 64;
  if (devices.empty())
    throw invalid_argument(whose + " lists no device");
  if (devices.size() > max_devices)
    throw invalid_argument(whose + " may list " + std::to_string(max_devices) +
                           " devices at most, got " + std::to_string(devices.size()));
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& device = devices[i];
    if (device.empty() || device.size() > max_name ||
        device.find_first_of("@, \t\n") != std::string::npos)
      throw invalid_argument(whose + ": '" + device.substr(0, max_name) +
                             "' is no device name (1 to 64 bytes, without '@', ',' or spaces)");
    if (std::find(devices.begin(), devices.begin() + static_cast<std::ptrdiff_t>(i), device) !=
        devices.begin() + static_cast<std::ptrdiff_t>(i))
      throw invalid_argument(whose + " lists '" + device + "' twice");
  }
}

world_core::world_core(runtime_state& state, world_options opts,
                       std::shared_ptr<world_callbacks> callbacks)
  : rt(state), options(checked(std::move(opts))),
    rank0_address(parse_endpoint(options.address, "world_options::address")),
    tls(options.tls.has_value()), callbacks_(std::move(callbacks)),
    // One more thread with shared memory: at any time one of them waits on the inbox.
    executor_(static_cast<std::size_t>(options.rpc_threads) + (options.shared_memory ? 1 : 0)) {}

world_core::~world_core() { stop(); }

void world_core::join(join_kind kind) {
  const auto deadline = clock::now() + options.timeout;
  if (with_store()) {
    join_store(deadline);
    install_actor_resolver(shared_from_this());
    return;
  }
  const auto listen = listen_address(options, rank0_address);
  check_listen_allowed(listen.host, tls, options.allow_insecure);
  if (tls)
    use_tls(rt, *options.tls);
  if (options.rank == 0) {
    world_id = make_nonce().substr(0, 16);
    open_inbox();
  }
  open_member(listen);
  if (options.rank != 0)
    join_rank0(deadline, kind);
  else if (options.world_size == 1)
    send_from_outside(member, roster_adoption{{options.name}, {}, {}, {options.devices}});
  await_formation(deadline);
  install_actor_resolver(shared_from_this()); // handles that arrive reach actors through here
}

void world_core::join_store(clock::time_point deadline) {
  const auto where = parse_store_location(options.store);
  const auto listen = store_seat::listen_address(where);
  check_listen_allowed(listen.host, tls, options.allow_insecure);
  if (tls)
    use_tls(rt, *options.tls);
  open_member(listen);
  auto store = reach_store(where, deadline);
  {
    std::unique_lock guard{stop_mutex};
    if (stopped_)
      throw_stopped();
    store_ = store;
  }
  const auto world = store->identify();
  world_id = world.id;
  // A member that joins the formed world keeps to TCP: its rank's inboxes may be those of an
  // earlier process of it, which the others no longer open (local_channel::rejoined).
  if (!world.formed)
    open_inbox();
  const auto host = listen.host == "0.0.0.0" ? store->advertised_host() : listen.host;
  claim_in_store(*store,
                 {options.rank, options.name, incarnation_of(member.node(), member.id()),
                  endpoint{host, port_}.to_string(), options.devices},
                 world.formed);
  await_formation(deadline);
  store->mark_formed(world_id, options.rank);
}

std::shared_ptr<store_seat> world_core::reach_store(const store_location& where,
                                                    clock::time_point deadline) {
  // A store started beside the members (as a launcher does) may not answer yet: it is waited
  // for, within the world's timeout.
  for (;;) {
    try {
      return std::make_shared<store_seat>(options, where, member);
    } catch (const network_error& e) {
      if (clock::now() + std::chrono::milliseconds{500} > deadline)
        throw network_error("world: the store at " + options.store + " did not answer within " +
                            readable(options.timeout) + ": " + e.what());
    }
    {
      std::shared_lock guard{stop_mutex};
      if (stopped_)
        throw_stopped();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{500});
  }
}

void world_core::claim_in_store(store_seat& store, const etcd::member_record& record,
                                bool formed_before) {
  // A rank or name held may be this member's own, from a process that died a moment ago: its
  // record goes with its lease, within the lease's TTL, or a TTL after a leader election in the
  // store (a new leader extends every lease). Held past three TTLs, it is another's.
  const auto held_until = clock::now() + 3 * store_lease_ttl;
  for (;;) {
    try {
      store.claim(record, formed_before);
      return;
    } catch (const invalid_argument&) {
      if (clock::now() > held_until)
        throw;
    }
    {
      std::shared_lock guard{stop_mutex};
      if (stopped_)
        throw_stopped();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{250});
  }
}

std::string world_core::missing_from_store() const {
  std::shared_lock guard{stop_mutex};
  if (!store_)
    return {};
  std::vector<bool> claimed(static_cast<std::size_t>(options.world_size), false);
  for (const auto& record : store_->members())
    if (record.rank < options.world_size)
      claimed[static_cast<std::size_t>(record.rank)] = true;
  std::string missing;
  for (std::size_t rank = 0; rank < claimed.size(); ++rank)
    if (!claimed[rank])
      missing += (missing.empty() ? "" : ", ") + std::to_string(rank);
  return missing;
}

std::uint64_t world_core::store_requests() const {
  std::shared_lock guard{stop_mutex};
  return store_ ? store_->requests() : 0;
}

void world_core::open_member(const endpoint& listen) {
  std::unique_lock guard{stop_mutex};
  if (stopped_)
    throw_stopped();
  answerer_ = std::make_unique<caf::scoped_actor>(*rt.system);
  (*answerer_)->mailbox().close();
  member = spawn_member(*this);
  port_ = publish(rt, member, listen, link());
}

void world_core::join_rank0(clock::time_point deadline, join_kind kind) {
  const auto rank0 = reach_rank0(deadline, kind);
  rank0_node_ = rank0.node();
  const auto listen = listen_address(options, rank0_address);
  const auto advertised = listen.host == "0.0.0.0" ? std::string{} : listen.host;
  const auto payload = ask_while_forming(
    0, rank0,
    join_message::make(wire_version, options.name, static_cast<std::int32_t>(options.rank),
                       static_cast<std::int32_t>(options.world_size), port_, advertised, member,
                       to_wire(encode_join_details(
                         {options.devices, static_cast<std::int32_t>(options.max_world_size)}))),
    deadline);
  auto roster = read_roster(as_bytes(payload), options.max_world_size);
  world_id = roster.world_id;
  // A member that joins again keeps to TCP: its inboxes' names are its old process's.
  if (roster.incarnation == 1)
    open_inbox();
  send_from_outside(member, roster_adoption{std::move(roster.names), std::move(roster.hosts),
                                            std::move(roster.ports), std::move(roster.devices),
                                            std::move(roster.gone)});
}

caf::actor world_core::reach_rank0(clock::time_point deadline, join_kind kind) {
  if (options.rank < options.world_size && kind == join_kind::first)
    return connect(rt, rank0_address, link(), deadline); // rank 0 may not listen yet
  // The world has formed already: rank 0 listens, unless it is lost. A few seconds cover a
  // launcher that starts this member beside those that form the world (and a rank 0 that takes
  // connections is waited for); joining again, this member tries for a while, and again later
  // (world_membership.hpp).
  const auto grace =
    kind == join_kind::first ? clock::duration{late_join_grace} : clock::duration{rejoin_reach};
  try {
    try {
      return connect(rt, rank0_address, link(), std::min(deadline, clock::now() + grace));
    } catch (const timeout_error&) {
      // Rank 0 takes connections but has not finished the handshake: it is busy (with other
      // joins, say), not gone. A member that joins for the first time waits for it.
      if (kind == join_kind::again ||
          !accepts_connections(rank0_address, std::chrono::milliseconds{1'000}))
        throw;
      return connect(rt, rank0_address, link(), deadline);
    }
  } catch (const timeout_error& e) {
    throw peer_lost("world: rank 0 (" + rank0_address.to_string() +
                    ") cannot be reached to join the formed world: it is lost, or never started (" +
                    e.what() + ")");
  }
}

link_policy world_core::link(std::string peer_name) const {
  return {options.secret, options.name, tls, std::move(peer_name), options.max_message_bytes};
}

reply_bytes world_core::ask_while_forming(int rank, const caf::actor& peer, caf::message message,
                                          clock::time_point deadline) {
  // Through the member actor, which monitors the peer from now on: if it dies, the request
  // fails at once with peer_lost (a request CAF sends itself would wait out its timeout).
  send_from_outside(member, early_peer{rank, peer});
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
  return await_call(send(rank, std::move(message), std::max(left, std::chrono::milliseconds{1})));
}

void world_core::await_formation(clock::time_point deadline) {
  if (formation_->wait_until(deadline)) {
    formation_->value(); // rethrows a failure
    return;
  }
  if (with_store())
    throw timeout_error("world: not all " + std::to_string(options.world_size) +
                        " members joined within " + readable(options.timeout) +
                        "; missing from the store: ranks " + missing_from_store());
  const auto missing = joined_.missing(options.world_size);
  throw timeout_error("world: not all " + std::to_string(options.world_size) +
                      " members joined within " + readable(options.timeout) +
                      (options.rank == 0 ? "; missing ranks: " + missing
                                         : "; rank " + std::to_string(options.rank) +
                                             " did not hear from rank 0 that everyone joined"));
}

void world_core::open_inbox() {
  if (!options.shared_memory)
    return;
  try {
    channel_ =
      std::make_unique<local_channel>(*this, world_id, options.rank, options.max_world_size);
  } catch (const troupe::error& e) {
    // No shared memory to be had: every call goes over TCP.
    std::cerr << "troupe: member " << options.name << " talks over TCP only: " << e.what() << "\n";
  }
}

bool world_core::local_call(int rank, const std::string& group, call_request& request,
                            const bytes_result& reply) {
  std::shared_lock guard{stop_mutex};
  if (stopped_)
    throw_stopped();
  // Cut off from a store's world, a call takes the member actor's way, which fails it typed.
  return channel_ && !(cut_off_ && with_store()) && channel_->call(rank, group, request, reply);
}

void world_core::post(std::function<void()> work) { executor_.post(std::move(work)); }

void world_core::let_running_calls_finish() noexcept {
  std::cerr << "troupe: " << label(options.rank) << " stops with " << executor_.busy()
            << " served call(s) still running after stop_grace (" << options.stop_grace.count()
            << " ms); they finish on their own and their "
            << "answers go nowhere\n";
  // The calls run on this core's threads: whoever holds it last must not be one of them
  // (destroying the executor joins its threads), so a thread of its own keeps it until then.
  if (auto keep = weak_from_this().lock())
    std::thread([keep] { keep->executor_.wait_idle(std::nullopt); }).detach();
  else
    executor_.wait_idle(std::nullopt); // from the destructor: nothing else can keep it
}

void world_core::peer_gone(int rank, const std::string& why, bool left) noexcept {
  key_owners.forget_rank(rank);
  calls.held.forget_owner(rank);
  if (channel_)
    channel_->lost(rank, why);
  if (!left)
    member_lost(rank);
  if (rank == 0 && !left && options.rank != 0 && !with_store())
    lost_the_world("lost rank 0");
}

void world_core::lost_the_world(const std::string& why) noexcept {
  cut_off_ = true;
  if (options.rejoin) {
    std::cerr << "troupe: " << label(options.rank) << " " << why
              << " and is out of the world; it joins again once it can (world_options::rejoin)\n";
    if (callbacks_->cut_off)
      callbacks_->cut_off(*this);
    return;
  }
  std::cerr << "troupe: " << label(options.rank) << " " << why
            << " and is out of the world for good (world_options::rejoin is off)\n";
}

void world_core::throw_stopped() const {
  if (cut_off_ && with_store())
    throw partition_error(stopped_why_);
  throw state_error(stopped_why_);
}

void world_core::partitioned(const std::string& why) noexcept {
  cut_off_ = true;
  if (channel_)
    channel_->fail_all(std::make_exception_ptr(partition_error(why)));
  lost_the_world("lost its lease in the world's store");
}

void world_core::retire(std::string why) noexcept {
  {
    std::unique_lock guard{stop_mutex};
    if (!stopped_)
      stopped_why_ = std::move(why);
  }
  stop();
}

void world_core::stop() noexcept {
  std::shared_ptr<store_seat> store;
  {
    std::unique_lock guard{stop_mutex};
    if (stopped_)
      return;
    stopped_ = true;
    store = std::move(store_);
    remove_actor_resolver(*this);
    if (member) {
      if (port_ != 0)
        unpublish(rt, member, port_);
      send_from_outside(member, stop_request{});
    }
  }
  if (store && !cut_off_)
    store->leave(); // before its lease goes: the others take its end for a leaving, no loss
  calls.actors.stop_all(); // outside the lock: the calls they held back are answered now
  dropping_queued_ = true;
  barriers_on_host.stop(); // the objects of creations that timed out here
  if (channel_)
    channel_->stop(); // its request reader is the only other one to post work: done here
  if (executor_.wait_idle(options.stop_grace))
    executor_.join();
  else
    let_running_calls_finish();
  if (member) {
    caf::scoped_actor self{*rt.system};
    self->wait_for(member);
    tsan_acquire(mailbox_of(member)); // its last handler happened before this
    std::unique_lock guard{stop_mutex};
    member = nullptr;
  }
  // A join still waiting (stopped from another thread) waits no more; the member actor, which
  // sets it otherwise, has ended.
  formation_failed(std::make_exception_ptr(state_error(stopped_why_)));
}

bool world_core::has_stopped() const {
  std::shared_lock guard{stop_mutex};
  return stopped_;
}

void world_core::throw_as_stopped() const {
  std::shared_lock guard{stop_mutex};
  throw_stopped();
}

bytes_result world_core::arrive_at_barrier(const std::string& group, std::uint64_t n,
                                           std::vector<int> ranks) {
  auto reply = std::make_shared<result_state<reply_bytes>>();
  std::shared_lock guard{stop_mutex};
  if (stopped_)
    throw_stopped();
  send_from_outside(member, barrier_arrival{group, n, std::move(ranks), reply});
  return reply;
}

bytes_result world_core::send(int to, caf::message message,
                              std::optional<std::chrono::milliseconds> timeout,
                              bytes_result reply) {
  if (!reply)
    reply = std::make_shared<result_state<reply_bytes>>();
  std::shared_lock guard{stop_mutex};
  if (stopped_)
    throw_stopped();
  send_from_outside(member, outgoing_request{to, std::move(message), timeout, reply});
  return reply;
}

bytes_result world_core::call(int to, const std::string& group, call_request request,
                              std::optional<std::chrono::milliseconds> timeout,
                              bytes_result reply) {
  const auto kind = static_cast<std::uint8_t>(request.kind);
  if (!timeout) {
    std::shared_lock guard{stop_mutex};
    if (stopped_)
      throw_stopped();
    if (auto ticket = direct.start(to, reply)) {
      one_way_call_message::send_from_outside(member, ticket->to, ticket->id, kind, group,
                                              std::move(request.key), std::move(request.name),
                                              std::move(request.type), to_wire(request.payload));
      return reply;
    }
  }
  return send(to,
              call_message::make(kind, group, std::move(request.key), std::move(request.name),
                                 std::move(request.type), to_wire(request.payload)),
              timeout, std::move(reply));
}

namespace {

/// A late answer that travels over TCP carries its tensors itself.
void encode_inline(served& outcome) noexcept {
  if (!outcome.encode)
    return;
  try {
    tensor_store_pause inline_tensors;
    outcome.payload = outcome.encode();
  } catch (...) {
    outcome.unsendable();
  }
}

} // namespace

void world_core::serve(std::uint64_t id, std::string group, incoming_call request,
                       call_answer answer) {
  if (answered_at_once(request.kind)) {
    const auto outcome = run(group, request, {});
    answer.deliver(outcome.why, to_wire(outcome.payload));
    call_finished(id);
    return;
  }
  post([this, id, group = std::move(group), request = std::move(request),
        answer = std::move(answer)]() mutable {
    if (dropping_queued_)
      return; // not started when the world stopped: its caller has heard already
    late_answer later; // made only for the kind that is answered after run() returns
    if (request.kind == call_kind::actor_call)
      later = [weak = weak_from_this(), id, answer](served outcome) mutable {
        encode_inline(outcome);
        answer.deliver(outcome.why, to_wire(outcome.payload));
        if (auto core = weak.lock())
          core->call_finished(id);
      };
    auto outcome = run(group, request, later);
    if (outcome.deferred)
      return;
    answer.deliver(outcome.why, to_wire(outcome.payload));
    call_finished(id);
  });
}

void world_core::call_finished(std::uint64_t id) noexcept {
  std::shared_lock guard{stop_mutex};
  if (member) // gone once the world has stopped: a call that outlived stop_grace
    send_from_outside(member, call_done{id});
}

late_answer world_core::late_local_answer(int rank, std::uint64_t id) {
  return [core = weak_from_this(), rank, id](served late) {
    if (auto alive = core.lock())
      alive->answer_local_call(rank, id, std::move(late));
  };
}

void world_core::answer_local_call(int rank, std::uint64_t id, served outcome) noexcept {
  std::shared_lock guard{stop_mutex};
  if (channel_)
    channel_->answer_late(rank, id, std::move(outcome));
}

served world_core::run(const std::string& group, incoming_call& request, const late_answer& later) {
  return calls.run(group, request, later);
}

reply_bytes world_core::ask_keys(key_operation op, key_table table, const std::string& group,
                                 const std::string& key) {
  if (with_store())
    return store_keys(op, table, group, key);
  return await_call(
    send(0,
         key_message::make(static_cast<std::uint8_t>(op), static_cast<std::uint8_t>(table), group,
                           key, static_cast<std::int32_t>(options.rank)),
         options.timeout));
}

reply_bytes world_core::store_keys(key_operation op, key_table table, const std::string& group,
                                   const std::string& key) {
  std::shared_ptr<store_seat> store;
  {
    std::shared_lock guard{stop_mutex};
    if (stopped_)
      throw_stopped();
    store = store_;
  }
  if (cut_off_)
    throw partition_error(label(options.rank) +
                          " is cut off from the world's store: its keys are out of reach");
  auto reply = store->keys(op, table, group, key, options.rank);
  if (op == key_operation::remove && table == key_table::services)
    send_from_outside(member, services_withdrawn{group, key});
  if (op != key_operation::lookup)
    return reply;
  // Its holder may be gone here before its lease has expired in the store.
  const int holder = deserialize<int>(as_bytes(reply));
  if (const auto how = gone_.how_gone(holder); how != gone_as::present)
    throw peer_lost(key_what(table, key) + " on group '" + group + "' went with its member: " +
                    label(holder) + (how == gone_as::left ? " has left the world" : " was lost"));
  return reply;
}

caf::strong_actor_ptr world_core::answerer() const {
  return caf::actor_cast<caf::strong_actor_ptr>(*answerer_);
}

std::string world_core::label(int rank) const {
  if (rank == coordinator_role)
    return "the world's coordinator";
  const auto* name = members.name(rank);
  if (name == nullptr) // still forming: names come with the roster
    return "rank " + std::to_string(rank);
  return "member '" + *name + "' (rank " + std::to_string(rank) + ")";
}

std::string world_core::member_name(int rank) const {
  const auto* name = members.name(rank);
  return name != nullptr ? *name : std::string{};
}

std::string world_core::loopback_host() const {
  const auto host = with_store()
                      ? store_seat::listen_address(parse_store_location(options.store)).host
                      : rank0_address.host;
  return is_loopback(host) ? host : std::string{};
}

std::string world_core::address_seen_by_others() {
  if (with_store()) {
    std::shared_lock guard{stop_mutex};
    return store_ ? store_->advertised_host() : std::string{};
  }
  if (options.rank != 0) {
    const auto peer = peer_of(rt, rank0_node_);
    return peer ? peer->local_address : std::string{};
  }
  for (const auto& node : joined_.nodes())
    if (const auto peer = peer_of(rt, node))
      return peer->local_address;
  return {};
}

void world_core::formed() noexcept { formation_->set_value(0); }

void world_core::formation_failed(std::exception_ptr why) noexcept {
  if (!formation_->ready())
    formation_->set_error(std::move(why));
}

void world_core::joined(int rank, const std::string& name, const caf::node_id& node) {
  joined_.add(rank, name, node);
}

void world_core::member_joined(const std::string& name, int rank) noexcept {
  callbacks_->joined.run(name, rank);
}

void world_core::mark_gone(int rank, bool left) { gone_.gone(rank, left); }

void world_core::add_lost_callback(std::function<void(const std::string&, int)> callback) {
  gone_.add_lost_callback(std::move(callback));
}

std::optional<int> world_core::first_gone(const std::vector<int>& ranks) {
  return gone_.first_gone(ranks);
}

void world_core::member_returned(int rank) {
  if (channel_)
    channel_->rejoined(rank);
  gone_.returned(rank);
}

std::vector<std::string> world_core::live_members() {
  auto names = members.names();
  std::vector<std::string> live;
  for (std::size_t rank = 0; rank < names.size(); ++rank)
    if (!names[rank].empty() && !gone_.is_gone(static_cast<int>(rank)))
      live.push_back(std::move(names[rank]));
  return live;
}

std::vector<std::string> world_core::live_members_by_name() {
  auto names = live_members();
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<int> world_core::live_ranks() {
  const auto names = members.names();
  std::vector<int> live;
  for (std::size_t rank = 0; rank < names.size(); ++rank)
    if (!names[rank].empty() && !gone_.is_gone(static_cast<int>(rank)))
      live.push_back(static_cast<int>(rank));
  return live;
}

std::optional<int> world_core::live_rank_of(std::string_view name) {
  const auto rank = members.rank_of(name);
  if (!rank || gone_.is_gone(*rank))
    return std::nullopt;
  return rank;
}

int world_core::live_count() const noexcept { return std::max(0, members.size() - gone_.count()); }

void world_core::member_lost(int rank) noexcept {
  const auto name = member_name(rank);
  gone_.tell_lost(name, rank);
  barriers_on_host.lost(rank);
  callbacks_->lost.run(name, rank);
}

} // namespace troupe::detail
