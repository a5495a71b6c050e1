#include "coordinator.hpp"

#include "troupe/actors/serialization.hpp"

#include <algorithm>

namespace troupe::detail {

void coordinator::arrive(const std::string& what, const std::vector<int>& ranks, int rank,
                         reply_promise promise, wire_bytes payload) {
  for (int rank : ranks)
    if (auto gone = gone_.find(rank); gone != gone_.end()) {
      deliver(promise, failure::of<peer_lost>(what + ": " + gone->second));
      return;
    }
  auto [at, fresh] = waiting_.try_emplace(what, rendezvous{ranks, {}});
  auto& meeting = at->second;
  if (meeting.of_present || meeting.ranks != ranks) {
    deliver(promise,
            failure::of<invalid_argument>(what + " is being created with other members elsewhere"));
    return;
  }
  meeting.arrived.insert_or_assign(rank, std::move(promise));
  if (!payload.empty())
    meeting.payloads.insert_or_assign(rank, std::move(payload));
  complete_if_whole(at);
}

void coordinator::arrive_present(const std::string& what, bool once,
                                 const std::vector<int>& present, int rank, reply_promise promise) {
  if (once && met_once_.contains(what))
    return deliver(promise, {});
  if (auto owed = owed_failures_.extract({what, rank}))
    return deliver(promise, failure::of<peer_lost>(owed.mapped()));
  auto [at, fresh] = waiting_.try_emplace(what, rendezvous{present, {}, {}, true, once});
  auto& meeting = at->second;
  if (!meeting.of_present || meeting.once != once)
    return deliver(
      promise, failure::of<invalid_argument>(what + " is being met with other members elsewhere"));
  meeting.arrived.insert_or_assign(rank, std::move(promise));
  complete_if_whole(at);
}

void coordinator::complete_if_whole(std::map<std::string, rendezvous>::iterator at) {
  auto& meeting = at->second;
  for (int rank : meeting.ranks)
    if (!meeting.arrived.contains(rank))
      return;
  if (meeting.once)
    met_once_.insert(at->first);
  wire_bytes gathered;
  if (!meeting.payloads.empty()) {
    std::vector<wire_bytes> in_order;
    for (int member : meeting.ranks)
      in_order.push_back(std::move(meeting.payloads[member]));
    gathered = to_wire(serialize(in_order));
  }
  for (auto& [_, waiting] : meeting.arrived)
    deliver(waiting, {}, gathered);
  waiting_.erase(at);
}

reply_result coordinator::keys(key_operation op, key_table table, const std::string& group,
                               const std::string& key, int rank) {
  const auto what = key_what(table, key);
  const auto where = " on group '" + group + "'";
  auto at = owners_.find({table, group, key});
  switch (op) {
  case key_operation::add:
    if (at != owners_.end())
      return failed_reply(failure::of<key_error>(
        what + " already " + (table == key_table::paired ? "paired to" : "registered on") +
        " group '" + group + "'"));
    owners_.emplace(std::tuple{table, group, key}, rank);
    orphaned_.erase({table, group, key});
    return ok_reply();
  case key_operation::remove:
    if (at == owners_.end() || at->second != rank)
      return failed_reply(
        failure::of<key_error>(what + " not found" + where +
                               (at == owners_.end() ? "" : " from this member (another has it)")));
    owners_.erase(at);
    return ok_reply();
  case key_operation::holds:
    if (at == owners_.end())
      return failed_reply(failure::of<key_error>(what + " not found" + where));
    return ok_reply(to_wire(serialize(at->second))); // the owner
  case key_operation::lookup:
    if (auto orphan = orphaned_.find({table, group, key});
        at == owners_.end() && orphan != orphaned_.end())
      return failed_reply(
        failure::of<peer_lost>(what + where + " went with its member: " + gone_[orphan->second]));
    if (at == owners_.end())
      return failed_reply(failure::of<key_error>(what + " not found" + where));
    return ok_reply(to_wire(serialize(at->second))); // the owner
  }
  return failed_reply(failure::of<invalid_argument>("unknown key operation"));
}

void coordinator::lost(int rank, const std::string& why, bool left) {
  gone_.emplace(rank, why);
  for (auto at = waiting_.begin(); at != waiting_.end();) {
    auto& meeting = at->second;
    const auto listed = std::find(meeting.ranks.begin(), meeting.ranks.end(), rank);
    if (listed == meeting.ranks.end()) {
      ++at;
      continue;
    }
    if (meeting.of_present && left) { // it went on purpose: the others meet without it
      meeting.ranks.erase(listed);
      meeting.arrived.erase(rank);
      const auto next = std::next(at);
      complete_if_whole(at);
      at = next;
      continue;
    }
    for (auto& [_, waiting] : meeting.arrived)
      deliver(waiting, failure::of<peer_lost>(at->first + ": " + why));
    if (meeting.of_present && !meeting.once) // the others would meet at the next one instead
      for (int other : meeting.ranks)
        if (other != rank && !meeting.arrived.contains(other))
          owed_failures_.emplace(std::pair{at->first, other}, at->first + ": " + why);
    at = waiting_.erase(at);
  }
  std::erase_if(owed_failures_, [rank](const auto& owed) { return owed.first.second == rank; });
  for (auto at = owners_.begin(); at != owners_.end();) {
    if (at->second != rank) {
      ++at;
      continue;
    }
    orphaned_.insert(*at);
    at = owners_.erase(at);
  }
}

void coordinator::returned(int rank) { gone_.erase(rank); }

void coordinator::fail_all(const failure& why) {
  for (auto& [_, meeting] : waiting_)
    for (auto& [__, waiting] : meeting.arrived)
      deliver(waiting, why);
  waiting_.clear();
}

} // namespace troupe::detail
