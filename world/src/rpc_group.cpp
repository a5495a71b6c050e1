#include "troupe/world/rpc_group.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "group_state.hpp"

#include <algorithm>

namespace troupe {

namespace detail {

world_core& group_state::live_core() const {
  if (destroyed.load())
    throw state_error("rpc group '" + name + "' was destroyed here");
  return *core;
}

std::vector<std::string> group_state::names_now() const {
  return follows_world ? core->live_members_by_name() : members;
}

std::vector<int> group_state::ranks_now() const {
  return follows_world ? core->live_ranks() : ranks;
}

std::optional<int> group_state::rank_of(std::string_view member) const {
  if (follows_world) // a member gone too: a call to it fails with peer_lost, as in a list
    return core->members.rank_of(member);
  const auto at = std::find(members.begin(), members.end(), member);
  if (at == members.end())
    return std::nullopt;
  return ranks[static_cast<std::size_t>(at - members.begin())];
}

std::string creation_rendezvous(const std::string& group) { return "group '" + group + "'"; }

std::string barrier_rendezvous(const std::string& group) {
  return "a barrier of group '" + group + "'";
}

int member_rank(const group_state& group, std::string_view name) {
  group.live_core();
  if (const auto rank = group.rank_of(name))
    return *rank;
  std::string all;
  for (const auto& member : group.names_now())
    all += (all.empty() ? "" : ", ") + member;
  throw invalid_argument("'" + std::string{name} + "' is not a member of rpc group '" + group.name +
                         "' (members" + (group.follows_world ? " now" : "") + ": " + all + ")");
}

std::string member_label(const group_state& group, int rank) { return group.core->label(rank); }

bytes_result start_call(group_state& group, int rank, call_request request,
                        std::optional<std::chrono::milliseconds> timeout, bytes_result reply) {
  if (!reply)
    reply = std::make_shared<result_state<reply_bytes>>();
  if (!timeout && group.live_core().local_call(rank, group.name, request, reply))
    return reply;
  if (request.encode) {
    tensor_store_pause inline_tensors; // a network message carries its tensors itself
    request.payload = request.encode();
  }
  return group.live_core().call(rank, group.name, std::move(request), timeout, std::move(reply));
}

reply_bytes await_call(const bytes_result& reply) {
  reply->wait();
  return std::move(reply->value());
}

namespace {

reply_bytes ask_keys(group_state& group, key_operation op, key_table table,
                     const std::string& key) {
  return group.live_core().ask_keys(op, table, group.name, key);
}

} // namespace

int find_owner(group_state& group, key_table table, const std::string& key) {
  return deserialize<int>(as_bytes(ask_keys(group, key_operation::lookup, table, key)));
}

namespace {

/// find_owner, its answer remembered (unless a forgetting overtook the question).
int looked_up_owner(group_state& group, key_table table, const std::string& key) {
  auto& owners = group.live_core().key_owners;
  const auto asked_at = owners.generation();
  const int owner = find_owner(group, table, key);
  owners.remember(table, group.name, key, owner, asked_at);
  return owner;
}

/// Whether member `owner` holds `key` of `table` now, asked of it (this member looks at its own).
/// A lost owner holds nothing; one that does not answer in time is not relied on.
bool still_holds(group_state& group, key_table table, int owner, const std::string& key) {
  auto& core = group.live_core();
  if (owner == core.options.rank)
    return core.calls.held.holds(table, group.name, key);
  try {
    // With a timeout, the call takes the connection to the owner, whose member actor answers it
    // at once; through the owner's inbox on this host it would wait for a thread that runs calls
    // there (at 256 members on 2 cores, a tenth of the rate).
    (void)await_call(
      start_call(group, owner, {holds_call(table), key, {}, {}, {}}, core.options.timeout));
    return true;
  } catch (const key_error&) {
    return false;
  } catch (const peer_lost&) {
    return false;
  } catch (const timeout_error&) {
    return false;
  }
}

/// The holder a holds answer names, if it names a rank of this world.
std::optional<int> holder_named(const group_state& group, const reply_bytes& answer) {
  if (answer.empty())
    return std::nullopt;
  try {
    const int rank = deserialize<int>(as_bytes(answer));
    if (rank >= 0 && rank < group.core->members.capacity())
      return rank;
  } catch (const serialization_error&) {
  }
  return std::nullopt; // still held: only nobody to remember
}

/// The owner this member remembers for `key`, if it still holds the key; else forgotten.
std::optional<int> remembered_owner(group_state& group, key_table table, const std::string& key) {
  auto& owners = group.live_core().key_owners;
  const auto known = owners.find(table, group.name, key);
  if (!known || still_holds(group, table, *known, key))
    return known;
  owners.forget(table, group.name, key);
  return std::nullopt;
}

} // namespace

int service_owner(group_state& group, const std::string& key) {
  if (auto known = group.live_core().key_owners.find(key_table::services, group.name, key))
    return *known;
  return looked_up_owner(group, key_table::services, key);
}

int current_owner(group_state& group, key_table table, const std::string& key) {
  if (const auto known = remembered_owner(group, table, key))
    return *known;
  return looked_up_owner(group, table, key);
}

bool has_key(group_state& group, key_table table, const std::string& key) {
  if (remembered_owner(group, table, key))
    return true;
  auto& owners = group.live_core().key_owners;
  const auto asked_at = owners.generation();
  try {
    // Its holder is asked next time, not rank 0.
    if (const auto holder = holder_named(group, ask_keys(group, key_operation::holds, table, key)))
      owners.remember(table, group.name, key, *holder, asked_at);
    return true;
  } catch (const key_error&) {
    return false;
  }
}

namespace {

/// Claims at rank 0 the key of an entry held here already; drops the entry if the key is taken.
void claim(group_state& group, key_table table, const std::string& key) {
  try {
    ask_keys(group, key_operation::add, table, key);
  } catch (...) {
    group.live_core().calls.held.remove(table, group.name, key);
    throw;
  }
}

} // namespace

void pair_value(group_state& group, const std::string& key, paired_value value) {
  group.live_core().calls.held.add_paired(group.name, key, std::move(value));
  claim(group, key_table::paired, key);
}

void register_service(group_state& group, const std::string& key, chunk_invoker service) {
  group.live_core().calls.held.add_service(group.name, key, std::move(service));
  claim(group, key_table::services, key);
}

void remove_key(group_state& group, key_table table, const std::string& key) {
  ask_keys(group, key_operation::remove, table, key);
  group.live_core().calls.held.remove(table, group.name, key);
}

void release_kept(group_state& group, int rank, const std::string& id) noexcept {
  try {
    if (!group.destroyed.load())
      (void)start_call(group, rank, {call_kind::release, id, {}, {}, {}}, std::nullopt);
  } catch (...) {
    // The world has stopped: nothing is kept for it any more.
  }
}

} // namespace detail

rpc_group::rpc_group(std::shared_ptr<detail::group_state> state) : state_(std::move(state)) {}

const std::shared_ptr<detail::group_state>& rpc_group::state() const {
  if (!state_)
    detail::throw_empty_handle("troupe::rpc_group", "a call");
  return state_;
}

const std::string& rpc_group::name() const { return state()->name; }

const std::string& rpc_group::own_name() const { return state()->core->options.name; }

std::vector<std::string> rpc_group::members() const { return state()->names_now(); }

bool rpc_group::is_member(std::string_view member) const {
  const auto& group = *state();
  return group.follows_world
           ? group.core->live_rank_of(member).has_value()
           : std::binary_search(group.members.begin(), group.members.end(), member);
}

void rpc_group::barrier() { meet(std::nullopt); }

void rpc_group::barrier(std::chrono::milliseconds timeout) {
  try {
    meet(timeout);
  } catch (const timeout_error&) {
    throw timeout_error("rpc group '" + state()->name +
                        "': not every member reached the barrier within " +
                        detail::readable(timeout));
  }
}

namespace {

/// What a member out of its world (stopped here, or cut off from it) hears at a barrier.
[[noreturn]] void throw_out_of_world(const detail::world_core& core, const std::string& label) {
  if (core.cut_off() && core.with_store())
    throw partition_error(label + ": this member lost its lease in the world's store");
  if (core.cut_off())
    throw peer_lost(label + ": " + core.label(0) + " is gone, and with it the world");
  core.throw_as_stopped(); // as a barrier along the tree would: no member meets it any more
}

/// A barrier of a group whose members are all on this host (host_barrier.hpp).
void meet_on_host(detail::group_state& group, std::optional<std::chrono::milliseconds> timeout) {
  auto& core = group.live_core();
  const auto n = ++group.barriers;
  const auto label = "barrier " + std::to_string(n) + " of group '" + group.name + "'";
  const auto out_of_world = [&core] { return core.has_stopped() || core.cut_off(); };
  if (out_of_world())
    throw_out_of_world(core, label);
  std::optional<std::chrono::steady_clock::time_point> until;
  if (timeout)
    until = std::chrono::steady_clock::now() + *timeout;
  const detail::host_barrier::watch looks{
    [&core](const std::vector<int>& ranks) { return core.first_gone(ranks); }, out_of_world};
  switch (group.on_host->meet(n, until, looks)) {
  case detail::host_barrier::outcome::met: return;
  case detail::host_barrier::outcome::timed_out: throw timeout_error(label);
  case detail::host_barrier::outcome::failed:
    throw peer_lost(label + ": " + core.label(*group.on_host->failed_by(n)) + " was lost");
  case detail::host_barrier::outcome::stopped: throw_out_of_world(core, label);
  }
}

} // namespace

void rpc_group::meet(std::optional<std::chrono::milliseconds> timeout) {
  auto& group = *state();
  if (group.on_host)
    return meet_on_host(group, timeout);
  // Met along a tree of the members (barrier_tree.hpp), or, following the world, at rank 0
  // among the members present; a barrier that timed out here has still arrived, and the others
  // pass it once everyone has.
  auto reply = group.follows_world
                 ? group.live_core().send(detail::coordinator_role,
                                          detail::presence_rendezvous_message::make(
                                            detail::barrier_rendezvous(group.name),
                                            static_cast<std::uint8_t>(detail::presence_round::each),
                                            static_cast<std::int32_t>(group.core->options.rank)),
                                          std::nullopt)
                 : group.live_core().arrive_at_barrier(group.name, ++group.barriers, group.ranks);
  if (timeout && !reply->wait_until(std::chrono::steady_clock::now() + *timeout))
    throw timeout_error("barrier of group '" + group.name + "'");
  detail::await_call(reply);
}

void rpc_group::destroy() {
  if (state()->destroyed.exchange(true))
    return;
  state()->core->groups.remove(state()->name);
}

} // namespace troupe
