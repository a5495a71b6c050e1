// Creating an rpc group: checking its members, and meeting them along the tree of its members
// (a group of all members at rank 0's rendezvous: those present when the first of them came).
#include "troupe/actors/detail/readable.hpp"

#include "barrier_tree.hpp"
#include "group_state.hpp"

#include <algorithm>

namespace troupe::detail {

namespace {

/// Meets the group's other members at its creation: barrier 0 of the group, along the tree of
/// its members (barrier_tree.hpp), so that rank 0 hears nothing of a group it is not in. This
/// member's arrival stands when it times out, as at any barrier.
void meet_at_creation(world_core& core, const std::string& name, const std::vector<int>& ranks,
                      std::chrono::milliseconds timeout) {
  const auto arrival = core.arrive_at_barrier(name, creation_barrier, ranks);
  if (!arrival->wait_until(std::chrono::steady_clock::now() + timeout))
    throw timeout_error("rpc group '" + name + "': not every member came to its creation within " +
                        readable(timeout));
  await_call(arrival);
}

} // namespace

rpc_group create_group(const std::shared_ptr<world_core>& shared, const std::string& name,
                       std::vector<std::string> members, std::chrono::milliseconds timeout) {
  auto& core = *shared;
  std::sort(members.begin(), members.end());
  if (std::adjacent_find(members.begin(), members.end()) != members.end())
    throw invalid_argument("rpc group '" + name + "' lists a member twice");
  if (!std::binary_search(members.begin(), members.end(), core.options.name))
    throw invalid_argument("rpc group '" + name + "': the caller '" + core.options.name +
                           "' is not among its members");
  std::vector<int> ranks;
  for (const auto& member : members) {
    const auto rank = core.members.rank_of(member);
    if (!rank)
      throw invalid_argument("rpc group '" + name + "': '" + member +
                             "' is not a member of the world");
    ranks.push_back(*rank);
  }
  if (!core.groups.add(name))
    throw state_error("rpc group '" + name + "' exists in this process already");
  std::shared_ptr<host_barrier> on_host;
  try {
    // Mapped before this member arrives at the creation: once it returns anywhere, every member
    // has the object, and its name may go.
    if (core.meets_on_host())
      on_host = host_barrier::open(core.world_id, name, ranks, core.options.rank);
    meet_at_creation(core, name, ranks, timeout);
  } catch (const timeout_error&) {
    if (on_host) // this member's arrival stands: the others may still make the group with it
      core.barriers_on_host.unlink_at_stop(on_host->name());
    core.groups.remove(name);
    throw;
  } catch (...) {
    if (on_host)
      on_host->unlink();
    core.groups.remove(name);
    throw;
  }
  auto group = std::make_shared<group_state>(shared, name, std::move(members), std::move(ranks));
  if (on_host) {
    on_host->unlink();
    // Members that do not share this /dev/shm (each sees an object without the others) all meet
    // along the tree instead, as across hosts.
    if (on_host->opened_by_all()) {
      core.barriers_on_host.add(on_host); // a loss wakes its waiters at once, everywhere
      group->on_host = std::move(on_host);
    }
  }
  return rpc_group{std::move(group)};
}

rpc_group create_group(const std::shared_ptr<world_core>& shared, const std::string& name,
                       all_members_t all, std::chrono::milliseconds timeout) {
  auto& core = *shared;
  if (!core.groups.add(name))
    throw state_error("rpc group '" + name + "' exists in this process already");
  try {
    await_call(
      core.send(coordinator_role,
                presence_rendezvous_message::make(creation_rendezvous(name),
                                                  static_cast<std::uint8_t>(presence_round::once),
                                                  static_cast<std::int32_t>(core.options.rank)),
                timeout));
  } catch (...) {
    core.groups.remove(name);
    throw;
  }
  return rpc_group{std::make_shared<group_state>(shared, name, all)};
}

} // namespace troupe::detail
