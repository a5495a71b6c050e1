// A handle's side of an actor on a world member: each handle numbers its calls (the host runs
// them in that order), keeps its own bound on the calls it has waiting, and finds its actor
// again by name when its member is lost. The spawner's handle also restarts the actor on
// another member, as its restart_policy allows.
#include "world_actor.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "actor_wire.hpp"
#include "group_state.hpp"

#include "troupe/actors/mailbox_bound.hpp"
#include "troupe/world/detail/group_actors.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace troupe::detail {

namespace {

using clock = std::chrono::steady_clock;
using call_ptr = std::shared_ptr<actor_call>;

/// What the spawner's handle keeps to make the actor again.
struct supervision {
  std::vector<std::byte> constructor;
  actor_options options;
  std::deque<clock::time_point> restarts; // within the policy's window
  std::size_t restarted = 0;
  bool restarting = false;
};

/// What every copy of a handle in this process shares, and the replies' callbacks keep.
struct actor_link : std::enable_shared_from_this<actor_link> {
  actor_link(std::shared_ptr<group_state> group, const std::string& name, std::string type,
             const actor_options& options, int rank, std::uint64_t incarnation)
    : group(std::move(group)), name(std::make_shared<const std::string>(name)),
      type(std::move(type)), bound(options.max_mailbox, options.mailbox_timeout), rank(rank),
      incarnation(incarnation) {}

  void enqueue(call_ptr call);
  void send(const call_ptr& call, std::string method);
  /// A call's answer came from member `from`.
  void answered(actor_call& call, const reply_bytes& payload, int from);
  /// A call's answer never came (its member lost, the world stopped): it fails, or goes again.
  void failed(const call_ptr& call, std::exception_ptr why, int to, std::uint64_t sent_to);
  /// Under the lock: the member and incarnation to call, looked up again after a loss.
  void refresh(std::unique_lock<std::mutex>& guard);
  void lost(int lost_rank, std::uint64_t lost_incarnation);
  /// The spawner's, on an executor thread: the actor's member `lost_rank` was lost; it is made
  /// again where its policy allows, or stopped.
  void restart(int lost_rank);
  /// Under the lock: counts one more restart for `why`; false (the actor stopped) when that is
  /// past the policy.
  bool count_restart(const std::string& why);
  /// Without the lock: makes the actor again on the first candidate member that can; nullopt
  /// if none could.
  std::optional<actor_restart> make_again(int lost_rank, const std::string& why);
  /// Under the lock: the actor runs at `to` now, as incarnation `made`; a fresh count of calls.
  void move_to(int to, std::uint64_t made) {
    std::lock_guard guard{place_mutex};
    rank = to;
    incarnation = made;
    next_seq = 0;
  }
  /// Where it runs, for an address: read without the lock, which is held while calls are sent
  /// (and encoding a call's arguments may ask a handle among them for its address).
  std::pair<int, std::uint64_t> place() {
    std::lock_guard guard{place_mutex};
    return {rank, incarnation};
  }

  std::string where(int at) const { return "actor '" + *name + "' on " + member_label(*group, at); }
  /// Under the lock: what a call to a stopped actor throws.
  [[noreturn]] void throw_stopped() const {
    throw actor_stopped("actor '" + *name + "' was stopped (" + cause + ") before this call ran");
  }

  const std::shared_ptr<group_state> group;
  const std::shared_ptr<const std::string> name;
  const std::string type;
  mailbox_bound bound;
  const std::uint64_t handle = next_handle();
  std::atomic<bool> stopped{false};

  std::mutex mutex;
  std::condition_variable restarted; // the spawner's: a restart is done
  std::mutex place_mutex; // taken alone, under `mutex` or without it
  int rank; // both written under `mutex` and `place_mutex`
  std::uint64_t incarnation;
  std::uint64_t next_seq = 0;
  bool stale = false; // its member was lost: find it again before the next call
  /// What a handle knows of its spawner's restart_policy: whether the actor is made again when
  /// its member is lost, and how often an idempotent call goes again. Set before the handle is
  /// shared, then only under `mutex` by refresh(), with the same values.
  std::atomic<bool> restartable{false};
  std::atomic<std::uint32_t> call_retries{0};
  void learn(bool restarted, std::uint32_t retries) {
    restartable = restarted;
    call_retries = retries;
  }
  std::string cause; // why it stopped, once it has
  std::optional<supervision> supervisor; // the spawner's handle only

  static std::uint64_t next_handle() {
    static std::atomic<std::uint64_t> counter{1};
    return counter++;
  }
};

/// The member the actor `name` runs on, by rank 0's table. A name that went with a lost member
/// may be made again elsewhere (its spawner restarts it): asked again until `patience` is over.
int owner_of(group_state& group, const std::string& name, std::chrono::milliseconds patience) {
  const auto until = clock::now() + patience;
  for (;;) {
    try {
      return find_owner(group, key_table::paired, actor_name_key(name));
    } catch (const peer_lost&) {
      if (clock::now() > until)
        throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
}

/// What a resolve found: the incarnation, and whether it is restarted.
actor_found found_at(group_state& group, int rank, const std::string& name,
                     const std::string& type) {
  call_request request{call_kind::actor_resolve, name, type, {}, {}};
  return decode_outcome<actor_found>(
    as_bytes(await_call(start_call(group, rank, std::move(request), std::nullopt))),
    member_label(group, rank));
}

std::uint64_t spawn_there(group_state& group, int rank, const std::string& name,
                          const std::string& type, const std::vector<std::byte>& constructor,
                          const actor_options& options, int replaces = -1) {
  const auto max_mailbox = options.max_mailbox;
  const bool restartable = options.restart.max_restarts > 0;
  const auto host_bound = max_mailbox * std::max<std::size_t>(1, group.core->options.world_size);
  call_request request{
    call_kind::actor_spawn,
    name,
    type,
    {},
    serialize(actor_spawn_request{constructor, host_bound, replaces, restartable,
                                  static_cast<std::uint32_t>(options.restart.max_call_retries)})};
  return decode_outcome<std::uint64_t>(
    as_bytes(await_call(start_call(group, rank, std::move(request), std::nullopt))),
    member_label(group, rank));
}

void actor_link::enqueue(call_ptr call) {
  auto method = call->method_key();
  if (!bound.reserve(stopped)) {
    std::lock_guard guard{mutex};
    if (stopped.load())
      throw_stopped();
    throw mailbox_full(*name, bound);
  }
  try {
    send(call, std::move(method));
  } catch (...) {
    bound.release(); // it never left
    throw;
  }
}

void actor_link::send(const call_ptr& call, std::string method) {
  auto reply = std::make_shared<result_state<reply_bytes>>();
  int to = 0;
  std::uint64_t sent_to = 0;
  {
    std::unique_lock guard{mutex};
    if (stopped.load())
      throw_stopped();
    if (stale)
      refresh(guard);
    to = rank;
    sent_to = incarnation;
    // Before it is sent: the answer is decoded as it arrives, while the store its tensors came
    // through (this member's reply inbox) is active.
    reply->on_value([self = shared_from_this(), call, to](const reply_bytes& payload) {
      self->answered(*call, payload, to);
    });
    actor_call_envelope envelope{incarnation, handle, next_seq++, {}};
    call_request request{call_kind::actor_call, *name, std::move(method), {}, {}};
    // Encoded once the way is known: to a member on this host, large tensors among the
    // arguments go into its inbox's segments (and again on a retry, wherever it goes then).
    request.encode = [&] {
      envelope.arguments = call->encode();
      return serialize(envelope);
    };
    // Sent under the lock: the numbers leave in order (the host puts them back in it).
    try {
      (void)start_call(*group, to, std::move(request), std::nullopt, reply);
    } catch (...) {
      --next_seq; // it never left: the host must not wait for its number
      throw;
    }
  }
  // Attached once the lock is released: a call that failed at once (its member known lost)
  // settles here, and what settling runs (the caller's callbacks, lost()) may take the lock.
  reply->on_error([self = shared_from_this(), call, to, sent_to](std::exception_ptr why) {
    self->failed(call, std::move(why), to, sent_to);
  });
}

void actor_link::answered(actor_call& call, const reply_bytes& payload, int from) {
  bound.release();
  try {
    auto answer = deserialize<actor_reply>(as_bytes(payload));
    if (answer.failure)
      call.fail(answer.failure->why.exception(where(from)));
    else
      call.settle(answer.outcomes, where(from));
  } catch (...) {
    call.fail(std::current_exception()); // an answer that does not decode
  }
}

void actor_link::failed(const call_ptr& call, std::exception_ptr why, int to,
                        std::uint64_t sent_to) {
  bound.release();
  try {
    std::rethrow_exception(why);
  } catch (const peer_lost& e) {
    lost(to, sent_to);
    if (call->idempotent && restartable && call->retries < call_retries) {
      ++call->retries;
      group->core->post([self = shared_from_this(), call] {
        try {
          self->enqueue(call);
        } catch (...) {
          call->fail(std::current_exception());
        }
      });
      return;
    }
    why = std::make_exception_ptr(
      worker_lost(where(to) + " was lost while this call ran or waited: " + e.what()));
  } catch (...) {
  }
  call->fail(why);
}

void actor_link::refresh(std::unique_lock<std::mutex>& guard) {
  if (supervisor) {
    const auto limit = group->core->options.timeout;
    if (!restarted.wait_for(guard, limit, [&] { return !supervisor->restarting; }))
      throw timeout_error("actor '" + *name + "' was not made again within " + readable(limit));
    if (stopped.load())
      throw_stopped();
    if (!stale)
      return;
  }
  // Another member's handle: wherever its spawner made it again.
  guard.unlock();
  int found = -1;
  actor_found now;
  // Only an actor its spawner restarts is worth waiting for. Rank 0 may still name the lost
  // member as its owner (it has not heard of the loss yet): asked again until the restart has
  // claimed the name, or the world's timeout.
  const auto until =
    clock::now() + (restartable ? group->core->options.timeout : std::chrono::milliseconds{0});
  for (;;) {
    try {
      const auto left = std::max(std::chrono::ceil<std::chrono::milliseconds>(until - clock::now()),
                                 std::chrono::milliseconds{0});
      found = owner_of(*group, *name, left);
      now = found_at(*group, found, *name, type);
      break;
    } catch (const key_error&) {
      throw actor_stopped("actor '" + *name + "' runs nowhere now: it was stopped");
    } catch (const peer_lost&) {
      if (clock::now() >= until)
        throw actor_stopped("actor '" + *name +
                            "' runs nowhere now: its member was lost, and it was not made again");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  guard.lock();
  move_to(found, now.incarnation);
  learn(now.restartable, now.max_call_retries);
  stale = false;
}

void actor_link::lost(int lost_rank, std::uint64_t lost_incarnation) {
  std::lock_guard guard{mutex};
  if (rank == lost_rank && incarnation == lost_incarnation)
    stale = true;
}

namespace {

/// Where a restart may go, in order: the members the policy names, or else the group's members
/// after the lost one, in turn; never the lost one.
std::vector<int> restart_candidates(const group_state& group, const restart_policy& policy,
                                    int lost_rank) {
  std::vector<int> ranks;
  if (!policy.members.empty()) {
    for (const auto& member : policy.members)
      ranks.push_back(member_rank(group, member));
  } else {
    // A list keeps the lost member; following the world, the live ranks, in rank order, do not:
    // the next is then the first rank above it.
    const auto all = group.ranks_now();
    const auto listed = std::find(all.begin(), all.end(), lost_rank);
    const auto next =
      listed != all.end() ? listed + 1 : std::upper_bound(all.begin(), all.end(), lost_rank);
    const auto at = static_cast<std::size_t>(next - all.begin());
    for (std::size_t step = 0; step < all.size(); ++step)
      ranks.push_back(all[(at + step) % all.size()]);
  }
  std::erase(ranks, lost_rank);
  return ranks;
}

} // namespace

void actor_link::restart(int lost_rank) {
  std::unique_lock guard{mutex};
  if (rank != lost_rank || stopped.load() || !supervisor) {
    if (supervisor)
      supervisor->restarting = false;
    restarted.notify_all();
    return;
  }
  stale = true;
  const auto why = member_label(*group, lost_rank) + " was lost";
  std::optional<actor_restart> done;
  if (count_restart(why)) {
    guard.unlock();
    done = make_again(lost_rank, why);
    guard.lock();
    supervisor->restarting = false;
    if (!done) {
      cause = why + ", and it could not be made again on " +
              (supervisor->options.restart.members.empty() ? std::string{"another member"}
                                                           : "a member its restart_policy names");
      stopped = true;
    }
    restarted.notify_all();
  }
  guard.unlock();
  bound.wake_all();
  if (done && supervisor->options.on_restart) {
    try {
      supervisor->options.on_restart(*done);
    } catch (...) {
      report_escaped_exception("the on_restart of actor '" + *name + "'");
    }
  }
}

bool actor_link::count_restart(const std::string& why) {
  auto& sup = *supervisor;
  const auto& policy = sup.options.restart;
  const auto now = clock::now();
  while (!sup.restarts.empty() && now - sup.restarts.front() > policy.within)
    sup.restarts.pop_front();
  if (sup.restarts.size() < policy.max_restarts) {
    sup.restarts.push_back(now);
    return true;
  }
  cause = why + (policy.max_restarts == 0
                   ? ", and its restart_policy allows no restart"
                   : ", past its restart_policy of " + std::to_string(policy.max_restarts) +
                       " restarts within " + readable(policy.within));
  stopped = true;
  sup.restarting = false;
  restarted.notify_all();
  return false;
}

std::optional<actor_restart> actor_link::make_again(int lost_rank, const std::string& why) {
  auto& sup = *supervisor;
  for (const int next : restart_candidates(*group, sup.options.restart, lost_rank)) {
    if (group->core->first_gone({next}))
      continue;
    try {
      const auto made =
        spawn_there(*group, next, *name, type, sup.constructor, sup.options, lost_rank);
      std::lock_guard guard{mutex};
      move_to(next, made);
      stale = false;
      return actor_restart{*name, ++sup.restarted, why};
    } catch (...) {
      // that member could not: the next one is tried
    }
  }
  return std::nullopt;
}

/// What handles hold: the link, shared by all copies in this process.
class world_actor final : public actor_core {
public:
  explicit world_actor(std::shared_ptr<actor_link> link) : link_(std::move(link)) {}

  void enqueue(call_ptr call) override { link_->enqueue(std::move(call)); }
  bool alive() const noexcept override { return !link_->stopped.load(); }
  void stop() noexcept override {
    int at = 0;
    std::uint64_t incarnation = 0;
    {
      std::lock_guard guard{link_->mutex};
      if (link_->stopped.exchange(true))
        return;
      link_->cause = "stop() was called";
      at = link_->rank;
      incarnation = link_->incarnation;
    }
    link_->bound.wake_all();
    try {
      (void)start_call(*link_->group, at,
                       {call_kind::actor_stop, *link_->name, {}, {}, serialize(incarnation)},
                       std::nullopt);
    } catch (...) {
      // the world has stopped, and the actor with it
    }
  }
  const std::shared_ptr<const std::string>& name() const noexcept override { return link_->name; }
  std::optional<actor_address> address() const override {
    const auto [rank, incarnation] = link_->place();
    return actor_address{link_->group->name, *link_->name,       link_->type,        rank,
                         incarnation,        link_->restartable, link_->call_retries};
  }

private:
  std::shared_ptr<actor_link> link_;
};

std::mutex resolver_mutex;
std::weak_ptr<world_core> resolver_world;
const world_core* resolver_owner = nullptr; // resolver_world's, even while it is destroyed

std::shared_ptr<actor_core> resolve_world_actor(const actor_address& address) {
  std::shared_ptr<world_core> core;
  {
    std::lock_guard guard{resolver_mutex};
    core = resolver_world.lock();
  }
  if (!core)
    throw serialization_error("a handle to actor '" + address.name +
                              "' arrived after this process left its world");
  if (address.rank < 0 || address.rank >= core->options.max_world_size)
    throw serialization_error("a handle to actor '" + address.name + "' names rank " +
                              std::to_string(address.rank) + ", not a member of this world");
  auto group = std::make_shared<group_state>(core, address.group, std::vector<std::string>{},
                                             std::vector<int>{});
  auto link = std::make_shared<actor_link>(std::move(group), address.name, address.type,
                                           actor_options{.name = address.name}, address.rank,
                                           address.incarnation);
  link->learn(address.restartable, address.max_call_retries);
  return std::make_shared<world_actor>(std::move(link));
}

} // namespace

void install_actor_resolver(const std::shared_ptr<world_core>& core) {
  std::lock_guard guard{resolver_mutex};
  resolver_world = core;
  resolver_owner = core.get();
  set_actor_resolver(&resolve_world_actor);
}

void remove_actor_resolver(const world_core& core) noexcept {
  std::lock_guard guard{resolver_mutex};
  if (resolver_owner != &core) // an attempt to join again that failed, say
    return;
  resolver_world.reset();
  resolver_owner = nullptr;
  set_actor_resolver(nullptr);
}

std::shared_ptr<actor_core> spawn_on_member(const std::shared_ptr<group_state>& group, int rank,
                                            actor_options options, std::string type,
                                            std::vector<std::byte> constructor) {
  if (options.name.empty())
    throw invalid_argument("an actor on a world member needs a name (actor_options::name), "
                           "unique in its group, by which the other members find it");
  if (options.max_mailbox == 0)
    throw invalid_argument("actor '" + options.name + "': max_mailbox must be at least 1");
  if (options.restart.within <= std::chrono::milliseconds{0})
    throw invalid_argument("actor '" + options.name + "': restart_policy::within must be positive");
  for (const auto& member : options.restart.members)
    (void)member_rank(*group, member); // invalid_argument unless it is one of the group's
  const auto incarnation = spawn_there(*group, rank, options.name, type, constructor, options);
  auto link =
    std::make_shared<actor_link>(group, options.name, std::move(type), options, rank, incarnation);
  link->learn(options.restart.max_restarts > 0,
              static_cast<std::uint32_t>(options.restart.max_call_retries));
  link->supervisor = supervision{std::move(constructor), std::move(options), {}, 0, false};
  group->core->add_lost_callback(
    [weak = std::weak_ptr<actor_link>{link}](const std::string&, int lost) {
      auto alive = weak.lock();
      if (!alive)
        return;
      {
        // Calls made from now on wait for the restart rather than find the actor nowhere.
        std::lock_guard guard{alive->mutex};
        if (alive->rank != lost || alive->stopped.load())
          return;
        alive->supervisor->restarting = true;
      }
      alive->group->core->post([alive, lost] { alive->restart(lost); }); // not on this thread
    });
  return std::make_shared<world_actor>(std::move(link));
}

std::shared_ptr<actor_core> find_actor(const std::shared_ptr<group_state>& group,
                                       const std::string& name, std::string type) {
  const int rank = owner_of(*group, name, group->core->options.timeout);
  const auto found = found_at(*group, rank, name, type);
  auto link = std::make_shared<actor_link>(group, name, std::move(type),
                                           actor_options{.name = name}, rank, found.incarnation);
  link->learn(found.restartable, found.max_call_retries);
  return std::make_shared<world_actor>(std::move(link));
}

int least_loaded_member(group_state& group) {
  std::vector<std::pair<int, bytes_result>> asked;
  for (const int rank : group.ranks_now())
    if (!group.core->first_gone({rank}))
      asked.emplace_back(rank, start_call(group, rank, {call_kind::actor_count, {}, {}, {}, {}},
                                          group.core->options.timeout));
  int best = -1;
  std::uint64_t fewest = 0;
  for (auto& [rank, reply] : asked) {
    try {
      const auto count = deserialize<std::uint64_t>(as_bytes(await_call(reply)));
      if (best < 0 || count < fewest) {
        best = rank;
        fewest = count;
      }
    } catch (const peer_lost&) {
      // lost since: passed over
    }
  }
  if (best < 0)
    throw peer_lost("no member of group '" + group.name + "' is left to run an actor");
  return best;
}

} // namespace troupe::detail
