// A world that keeps its tables in a store (world_options::store, store_seat.hpp), at the
// member actor. The store's news say who the members are: the roster is every member the store
// holds once every founder (ranks below world_size) has claimed its rank, or at once when the
// world had formed before this member came; a member whose record goes is lost (or has left,
// if it said so first), one whose record comes joined. No rank is in charge: the coordinator,
// which meets groups' rendezvous and passes reach requests on, is the oldest member there is
// (the lowest revision of a record: etcd's election, its candidates the members' leased
// records), and when it goes the next oldest takes over. The coordinator reaches every lower
// rank itself, and every higher one connects to it, so a pair still has one connection, made
// by its higher rank (member_peers.cpp). This member losing its lease is a partition: it is
// out of the world, and everything it waits on fails with partition_error.
#include "member_handlers.hpp"

#include "troupe/actors/annotated.hpp"

#include <algorithm>
#include <iostream>
#include <limits>

namespace troupe::detail {

namespace {

/// How long a message from a member not known here yet waits for the store's news of it.
constexpr auto news_grace = std::chrono::seconds{3};
/// How often messages that wait for news are tried again when no other message comes.
constexpr auto news_tick_period = std::chrono::milliseconds{200};
/// The most senders whose messages may wait for news at once: strangers cannot fill the cache.
constexpr std::size_t max_awaited_senders = 1024;

void report(member_actor* self, const etcd::member_record& record, const std::string& why) {
  std::cerr << "troupe: " << self->state.core->label(self->state.core->options.rank)
            << " ignores the store's record of '" << record.name.substr(0, 255) << "' at rank "
            << record.rank << ": " << why << "\n";
}

/// `record`'s member, taken into this member's tables (back, if its rank was lost and this is
/// its new incarnation); the joined callbacks run if `tell`. False if the record is unusable.
bool take_member(member_actor* self, const etcd::member_record& record, bool tell) {
  auto& st = self->state;
  const auto rank = record.rank;
  const auto at = static_cast<std::size_t>(rank);
  std::string why;
  auto devices = checked_devices(record.name, record.devices, why);
  if (!devices) {
    report(self, record, why);
    return false;
  }
  endpoint address;
  try {
    address = parse_endpoint(record.address, "the address in the store");
  } catch (const invalid_argument& e) {
    report(self, record, e.what());
    return false;
  }
  const auto* holder = st.core->members.name(rank);
  if (holder != nullptr && *holder != record.name) {
    report(self, record, "the rank is '" + *holder + "''s (a rank keeps its name)");
    return false;
  }
  if (holder != nullptr && st.lost[at]) {
    take_back(self, rank, member_identity{});
    st.core->members.renew(rank, std::move(*devices));
  } else if (!st.core->members.add(rank, record.name, std::move(*devices))) {
    report(self, record, "the name is another rank's");
    return false;
  }
  st.addresses[at] = address;
  if (tell)
    st.core->member_joined(record.name, rank);
  if (st.coordinating == st.core->options.rank && rank < st.coordinating && !st.peers[at]) {
    st.greet_when_reached.insert(rank); // it adopts the coordinator from the greeting
    connect_to(self, rank);
  }
  return true;
}

/// The oldest member the store holds that has not said it leaves: the coordinator. A member
/// this one lost stays it until the store says it is gone, so that every member follows the
/// same coordinators, in the store's order (requests to it wait meanwhile).
int oldest_member(member_actor* self) {
  auto& st = self->state;
  int oldest = -1;
  auto since = std::numeric_limits<std::int64_t>::max();
  for (const auto& [rank, record] : st.records)
    if (!record.left && record.since > 0 && record.since < since) {
      oldest = rank;
      since = record.since;
    }
  return oldest;
}

/// Makes the oldest member the coordinator if it is not already, and reaches it.
void elect(member_actor* self) {
  auto& st = self->state;
  if (!st.roster_known) // the addresses come with the roster
    return;
  const auto oldest = oldest_member(self);
  if (oldest < 0 || oldest == st.coordinating)
    return;
  st.coordinating = oldest;
  const int me = st.core->options.rank;
  if (oldest == me) {
    for (const auto& [rank, record] : st.records)
      if (rank < me && !st.lost[static_cast<std::size_t>(rank)] &&
          !st.peers[static_cast<std::size_t>(rank)]) {
        st.greet_when_reached.insert(rank);
        connect_to(self, rank);
      }
  } else if (oldest < me && !st.peers[static_cast<std::size_t>(oldest)]) {
    st.greet_when_reached.insert(oldest); // the coordinator adopts this member from it
    connect_to(self, oldest);
  } else if (st.peers[static_cast<std::size_t>(oldest)]) {
    for (const auto& [rank, waiting] : st.awaiting_peer) // asked of the old one: ask again
      if (rank > me)
        reach_through_coordinator(self, rank);
  }
  resend_to_coordinator(self);
  check_ready(self);
}

/// Once this member has claimed its rank and every founder has (or the world formed before it
/// came), the roster is every member the store holds.
void form_if_whole(member_actor* self) {
  auto& st = self->state;
  if (st.roster_known || !st.claimed)
    return;
  if (!st.formed_before)
    for (int rank = 0; rank < st.core->options.world_size; ++rank)
      if (!st.records.contains(rank))
        return;
  const auto& options = st.core->options;
  st.core->members.add(options.rank, options.name, options.devices);
  for (const auto& [rank, record] : st.records)
    if (rank != options.rank)
      take_member(self, record, false);
  st.roster_known = true;
  elect(self);
  check_ready(self);
}

void on_joined_store(member_actor* self, const etcd::member_record& record) {
  auto& st = self->state;
  if (record.rank == st.core->options.rank)
    return;
  st.records[record.rank] = record;
  if (!st.roster_known) {
    form_if_whole(self);
    return;
  }
  take_member(self, record, true);
  elect(self);
}

void on_lost_store(member_actor* self, const etcd::member_record& record) {
  auto& st = self->state;
  const auto found = st.records.find(record.rank);
  if (found == st.records.end() || found->second.incarnation != record.incarnation)
    return;
  const auto at = static_cast<std::size_t>(record.rank);
  if (found->second.left)
    st.left[at] = true;
  // A member that left on purpose and is connected here is lost when its actor's down message
  // comes, after everything it sent before it left (a barrier's release, say): the store's
  // news may overtake those.
  const bool ends_with_its_connection = found->second.left && st.peers[at];
  st.records.erase(found);
  if (st.roster_known && st.core->members.name(record.rank) != nullptr && !ends_with_its_connection)
    on_lost(self, record.rank);
  elect(self);
}

/// This member's lease is gone: the others lose it, and it is out of the world.
void on_cut_off(member_actor* self, const std::string& why) {
  auto& st = self->state;
  if (st.partitioned)
    return;
  st.partitioned = true;
  const int me = st.core->options.rank;
  const auto message = st.core->label(me) + " lost its lease in the world's store (" + why +
                       "): it is cut off from the world (a partition)";
  const auto error = std::make_exception_ptr(partition_error(message));
  for (auto& request : st.pending.take_all())
    request.reply->set_error(error);
  st.awaiting_peer.clear(); // their requests were in `pending`
  st.for_coordinator.clear();
  st.core->direct.close();
  for (int rank = 0; rank < st.core->members.capacity(); ++rank)
    if (rank != me)
      for (auto& reply : st.core->direct.lost(rank))
        reply->set_error(error);
  st.groups.fail_all(failure::of<peer_lost>(message));
  barriers_cut_off(self, message);
  if (!st.ready)
    st.core->formation_failed(error);
  st.core->partitioned(message);
}

} // namespace

bool is_incarnation(member_actor* self, int rank, const member_identity& identity) {
  auto& st = self->state;
  if (st.core->with_store()) {
    const auto found = st.records.find(rank);
    return found != st.records.end() && found->second.incarnation == identity.text();
  }
  const auto joined = st.joined_as.find(rank);
  return joined == st.joined_as.end() || joined->second == identity;
}

bool awaits_news(member_actor* self) {
  auto& st = self->state;
  const auto& sender = self->current_sender();
  if (!st.core->with_store() || st.partitioned || !sender || !proven_name(self))
    return false;
  const auto now = std::chrono::steady_clock::now();
  auto [since, fresh] = st.awaited_news.try_emplace(sender->node(), now);
  if (fresh && st.awaited_news.size() > max_awaited_senders) {
    st.awaited_news.erase(since);
    return false;
  }
  if (now - since->second > news_grace)
    return false;
  if (!st.news_tick_due) {
    st.news_tick_due = true;
    self->delayed_send(self, news_tick_period, news_tick{});
  }
  return true;
}

bool sender_awaited(member_actor* self, int from) {
  return from < 0 && (!self->state.roster_known || awaits_news(self));
}

bool names_a_member_gone_here(member_actor* self, const std::vector<int>& ranks) {
  const auto& st = self->state;
  return st.core->with_store() && std::any_of(ranks.begin(), ranks.end(), [&](int member) {
           return member >= 0 && static_cast<std::size_t>(member) < st.lost.size() &&
                  st.lost[static_cast<std::size_t>(member)];
         });
}

std::optional<int> sender_unless_awaited(member_actor* self) {
  const int from = sender_rank(self);
  if (sender_awaited(self, from))
    return std::nullopt;
  return from;
}

void on_news_tick(member_actor* self, news_tick&) {
  auto& st = self->state;
  st.news_tick_due = false;
  // Handling this tick tried every waiting message again (CAF retries skipped messages after
  // each message handled); senders past the grace are refused from now on, so forgotten.
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(st.awaited_news,
                [&](const auto& entry) { return now - entry.second > 2 * news_grace; });
  if (!st.awaited_news.empty()) {
    st.news_tick_due = true;
    self->delayed_send(self, news_tick_period, news_tick{});
  }
}

void reach_through_coordinator(member_actor* self, int rank) {
  auto& st = self->state;
  const int coordinator = st.coordinating;
  if (coordinator < 0 || coordinator == st.core->options.rank)
    return; // every higher rank connects to the coordinator by itself
  if (const auto& handle = st.peers[static_cast<std::size_t>(coordinator)])
    reach_message::send(self, handle, static_cast<std::int32_t>(rank));
}

void on_store_news(member_actor* self, store_news& news) {
  auto& st = self->state;
  switch (news.what) {
  case store_news::kind::claimed:
    st.records[news.record.rank] = news.record;
    st.claimed = true;
    st.formed_before = news.formed_before;
    form_if_whole(self);
    elect(self);
    return;
  case store_news::kind::joined: on_joined_store(self, news.record); return;
  case store_news::kind::left:
    if (auto found = st.records.find(news.record.rank);
        found != st.records.end() && found->second.incarnation == news.record.incarnation)
      found->second.left = true;
    return;
  case store_news::kind::lost: on_lost_store(self, news.record); return;
  case store_news::kind::cut_off: on_cut_off(self, news.why); return;
  }
}

} // namespace troupe::detail
