// The member actor's part in a group's barriers (barrier_tree.hpp): this member's own arrival,
// its children's, telling its parent once all have come, and the release that comes back and
// goes on down.
//
// A barrier that cannot be met fails everywhere, as peer_lost: a member that finds a tree
// neighbour lost before it was done with it (its parent, or a child that had not arrived), or a
// member of the group lost before an arrival, fails the barrier here, answers its children and
// tells its parent, and each of them does the same. After rank 0's loss, every barrier fails (no
// member sends to another any more). A failure is remembered a while, so that a member arriving
// late hears of it instead of waiting. A group's creation is its barrier 0 (creation_barrier).
#include "member_handlers.hpp"

#include "troupe/actors/serialization.hpp"

#include <algorithm>

namespace troupe::detail {

namespace {

using key = barrier_table::key;

/// This member's place among the group's ranks; nullopt if it is not one of them.
std::optional<std::size_t> position_of(int rank, const std::vector<int>& ranks) {
  const auto at = std::find(ranks.begin(), ranks.end(), rank);
  if (at == ranks.end())
    return std::nullopt;
  return static_cast<std::size_t>(at - ranks.begin());
}

std::string barrier_label(const key& at) {
  if (at.second == creation_barrier)
    return "the creation of group '" + at.first + "'";
  return "barrier " + std::to_string(at.second) + " of group '" + at.first + "'";
}

bool is_lost(member_actor* self, int rank) {
  const auto& lost = self->state.lost;
  return rank >= 0 && static_cast<std::size_t>(rank) < lost.size() &&
         lost[static_cast<std::size_t>(rank)];
}

/// Why a barrier of `ranks` cannot be met here, if a member of it (or rank 0) was lost.
std::optional<std::string> lost_among(member_actor* self, const key& at,
                                      const std::vector<int>& ranks) {
  auto& st = self->state;
  if (is_lost(self, 0) && st.core->options.rank != 0 && !st.core->with_store())
    return barrier_label(at) + ": " + st.core->label(0) + " is gone, and with it the world";
  for (const int rank : ranks)
    if (is_lost(self, rank))
      return barrier_label(at) + ": " + st.core->label(rank) +
             (st.left[static_cast<std::size_t>(rank)] ? " has left the world" : " was lost");
  return std::nullopt;
}

/// What a parent's failed answer says, as this member passes it on: troupe's member errors as
/// themselves (a remote one too, by what it derives from), any other as a state_error.
failure parent_failure(const std::exception_ptr& why) {
  try {
    std::rethrow_exception(why);
  } catch (const peer_lost& e) {
    return failure::of<peer_lost>(e.what());
  } catch (const invalid_argument& e) {
    return failure::of<invalid_argument>(e.what());
  } catch (const serialization_error& e) {
    return failure::of<serialization_error>(e.what());
  } catch (const key_error& e) {
    return failure::of<key_error>(e.what());
  } catch (const std::exception& e) {
    return failure::of<state_error>(e.what());
  } catch (...) {
    return failure::of<state_error>("a barrier's parent failed");
  }
}

/// The barrier ends: its children and this member's caller hear `why` (nothing failed: go on).
void release(barrier_progress& barrier, const failure& why) {
  for (auto& child : barrier.children)
    deliver(child, why);
  barrier.children.clear();
  if (!barrier.waiting_here)
    return;
  if (!why.failed())
    barrier.waiting_here->set_value({});
  else
    barrier.waiting_here->set_error(why.exception());
}

/// Sends this member's arrival (or, with `failed`, the barrier's failure) to its parent in the
/// tree of `ranks`; the parent's answer comes back to this actor as a barrier_answer.
void tell_parent(member_actor* self, const key& at, const std::vector<int>& ranks, int parent,
                 const std::string& failed) {
  auto reply = std::make_shared<result_state<reply_bytes>>();
  const auto home = caf::actor_cast<caf::actor_addr>(self); // weakly: the reply waits in here
  const auto tell = [home, at](failure why) {
    if (auto member = caf::actor_cast<caf::actor>(home))
      send_from_outside(member, barrier_answer{at, std::move(why)});
  };
  reply->on_value([tell](const reply_bytes&) { tell({}); });
  reply->on_error([tell](std::exception_ptr why) { tell(parent_failure(why)); });
  outgoing_request request{
    parent, barrier_message::make(at.first, at.second, to_wire(serialize(ranks)), failed),
    std::nullopt, std::move(reply), true};
  send_request(self, request);
}

/// The barrier fails here (`why`): its children and caller hear it, and so does its parent if
/// it has not heard from this member yet.
void fail(member_actor* self, const key& at, std::vector<int> ranks, const std::string& why) {
  auto& st = self->state;
  if (st.barriers.failure(at, ranks) != nullptr)
    return;
  st.barriers.remember_failure(at, ranks, why);
  bool told_parent = false;
  if (auto barrier = st.barriers.take(at)) {
    told_parent = barrier->told_parent;
    release(*barrier, failure::of<peer_lost>(why));
  }
  const auto position = position_of(st.core->options.rank, ranks);
  if (!position || told_parent)
    return;
  if (const auto parent = place_in_tree(*position, ranks.size()).parent)
    if (!is_lost(self, ranks[*parent]))
      tell_parent(self, at, ranks, ranks[*parent], why);
}

void end(member_actor* self, const key& at, const failure& why) {
  auto barrier = self->state.barriers.take(at);
  if (!barrier) // it failed here already (fail: remembered)
    return;
  if (why.failed())
    self->state.barriers.remember_failure(at, barrier->ranks, why.message);
  release(*barrier, why);
}

/// Tells the parent once this member and all its children have arrived; at the root, releases.
void advance(member_actor* self, const key& at) {
  auto& st = self->state;
  auto* barrier = st.barriers.find(at);
  if (barrier == nullptr || !barrier->arrived_here || barrier->told_parent)
    return;
  const auto position = position_of(st.core->options.rank, barrier->ranks);
  const auto place = place_in_tree(*position, barrier->ranks.size());
  if (barrier->children.size() < place.children)
    return;
  if (!place.parent)
    return end(self, at, {});
  barrier->told_parent = true;
  tell_parent(self, at, barrier->ranks, barrier->ranks[*place.parent], {});
}

/// The barrier `at` of `ranks`, made if new; nullptr (and `refused` said) if it cannot be.
barrier_progress* progress_of(member_actor* self, const key& at, const std::vector<int>& ranks,
                              std::string& refused) {
  auto* barrier = self->state.barriers.find_or_add(at);
  if (barrier == nullptr) {
    refused = barrier_label(at) + ": " + std::to_string(barrier_table::max_in_progress) +
              " barriers are in progress at this member already";
    return nullptr;
  }
  if (barrier->ranks.empty())
    barrier->ranks = ranks;
  if (barrier->ranks != ranks) {
    refused = barrier_label(at) + " is met with other members elsewhere";
    return nullptr;
  }
  return barrier;
}

/// Whether a loss of `rank` dooms the barrier here: it is this member's parent, or a child that
/// had not arrived (a child that did may go: it is done with this barrier).
bool waits_on(member_actor* self, const barrier_progress& barrier, int rank) {
  const auto position = position_of(self->state.core->options.rank, barrier.ranks);
  const auto theirs = position_of(rank, barrier.ranks);
  if (!position || !theirs)
    return false;
  const auto place = place_in_tree(*position, barrier.ranks.size());
  if (place.parent == *theirs)
    return true;
  const bool child = *theirs >= place.first_child && *theirs < place.first_child + place.children;
  return child && std::find(barrier.arrived_children.begin(), barrier.arrived_children.end(),
                            rank) == barrier.arrived_children.end();
}

} // namespace

void arrive_at_barrier(member_actor* self, barrier_arrival& arrival) {
  auto& st = self->state;
  const auto at = key{arrival.group, arrival.n};
  const auto fail_here = [&](std::exception_ptr why) { arrival.reply->set_error(std::move(why)); };
  if (st.partitioned)
    return fail_here(std::make_exception_ptr(
      partition_error(barrier_label(at) + ": " + st.core->label(st.core->options.rank) +
                      " is cut off from the world: its lease in the world's store is gone")));
  if (!position_of(st.core->options.rank, arrival.ranks))
    return fail_here(std::make_exception_ptr(
      invalid_argument(barrier_label(at) + ": this member is not one of the group's")));
  if (const auto* failed = st.barriers.failure(at, arrival.ranks))
    return fail_here(std::make_exception_ptr(peer_lost(*failed)));
  if (auto lost = lost_among(self, at, arrival.ranks)) {
    fail(self, at, arrival.ranks, *lost);
    return fail_here(std::make_exception_ptr(peer_lost(*lost)));
  }
  std::string refused;
  auto* barrier = progress_of(self, at, arrival.ranks, refused);
  if (barrier == nullptr)
    return fail_here(std::make_exception_ptr(state_error(refused)));
  // Arriving at a creation again: the caller that arrived before timed out, and this one waits
  // in its place (its arrival stood: the parent may have heard of it already).
  if (barrier->arrived_here && at.second != creation_barrier)
    return fail_here(
      std::make_exception_ptr(state_error(barrier_label(at) + " was arrived at twice")));
  barrier->arrived_here = true;
  barrier->waiting_here = std::move(arrival.reply);
  advance(self, at);
}

reply_result child_arrives(member_actor* self, std::string& group, std::uint64_t n,
                           const wire_bytes& encoded_ranks, const std::string& failed) {
  auto& st = self->state;
  const auto at = key{group, n};
  const int from = sender_rank(self);
  if (sender_awaited(self, from)) // a child that formed, or heard of a joiner, before this member
    return caf::skip;
  std::vector<int> ranks;
  try {
    ranks = deserialize<std::vector<int>>(from_wire(encoded_ranks));
  } catch (const serialization_error& e) {
    return failed_reply(failure::of<serialization_error>(e.what()));
  }
  // One of them is back, as the child may know already: wait for the store's news of it.
  if (names_a_member_gone_here(self, ranks) && awaits_news(self))
    return caf::skip;
  const auto mine = position_of(st.core->options.rank, ranks);
  const auto theirs = position_of(from, ranks);
  if (from < 0 || !mine || !theirs || place_in_tree(*theirs, ranks.size()).parent != *mine)
    return failed_reply(failure::of<invalid_argument>(
      barrier_label(at) + ": an arrival from a member that is not a child of " +
      st.core->label(st.core->options.rank) + " in its tree"));
  if (!failed.empty()) { // it failed below that child: it fails here, and above
    fail(self, at, ranks, failed);
    return failed_reply(failure::of<peer_lost>(failed));
  }
  if (const auto* known = st.barriers.failure(at, ranks))
    return failed_reply(failure::of<peer_lost>(*known));
  if (auto lost = lost_among(self, at, ranks)) {
    fail(self, at, ranks, *lost);
    return failed_reply(failure::of<peer_lost>(*lost));
  }
  std::string refused;
  auto* barrier = progress_of(self, at, ranks, refused);
  if (barrier == nullptr)
    return failed_reply(failure::of<state_error>(refused));
  if (std::find(barrier->arrived_children.begin(), barrier->arrived_children.end(), from) !=
      barrier->arrived_children.end())
    return failed_reply(
      failure::of<state_error>(barrier_label(at) + ": " + st.core->label(from) + " arrived twice"));
  auto promise = self->make_response_promise<std::uint8_t, std::string, wire_bytes>();
  barrier->arrived_children.push_back(from);
  barrier->children.push_back(promise);
  advance(self, at);
  return promise;
}

void parent_answered(member_actor* self, barrier_answer& answer) {
  end(self, answer.at, answer.why);
}

void barriers_lost(member_actor* self, barrier_loss& loss) {
  auto& st = self->state;
  const auto& [rank, why, left] = loss;
  // Rank 0's loss ends the world's group operations everywhere (not with a store). When it left
  // on purpose (the world ends), what it released before it left still comes down the trees.
  const bool all = rank == 0 && !left && st.core->options.rank != 0 && !st.core->with_store();
  for (const auto& at : st.barriers.keys()) {
    const auto* barrier = st.barriers.find(at);
    if (all || waits_on(self, *barrier, rank))
      fail(self, at, barrier->ranks, barrier_label(at) + ": " + why);
  }
}

namespace {

/// Ends every barrier in progress here: this member's own caller gets `own`, its children
/// peer_lost saying `why`.
void end_all(member_actor* self, const std::string& why, const std::exception_ptr& own) {
  auto& st = self->state;
  for (const auto& at : st.barriers.keys()) {
    auto barrier = st.barriers.take(at);
    if (barrier->waiting_here)
      std::exchange(barrier->waiting_here, nullptr)->set_error(own);
    release(*barrier, failure::of<peer_lost>(why));
  }
}

} // namespace

void barriers_stopped(member_actor* self, const std::string& why) {
  // This member's own caller hears what its other calls hear; its children, that it is gone.
  if (self->state.partitioned)
    end_all(self, why, std::make_exception_ptr(partition_error(why)));
  else
    end_all(self, why, std::make_exception_ptr(state_error("the world has stopped")));
}

void barriers_cut_off(member_actor* self, const std::string& why) {
  end_all(self, why, std::make_exception_ptr(partition_error(why)));
}

} // namespace troupe::detail
