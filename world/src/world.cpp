#include "troupe/world/world.hpp"

#include "group_state.hpp"
#include "world_membership.hpp"

#include <algorithm>
#include <atomic>

namespace troupe {

namespace {

/// One world per process at a time (machin: "World could only be initialized once!").
std::atomic<bool> world_alive{false};

/// How often a member that asks a store for any rank tries the next free one when another
/// member claimed the one it tried a moment before.
constexpr int free_rank_tries = 8;

struct exclusive_world {
  exclusive_world() {
    if (world_alive.exchange(true))
      throw state_error("this process is a member of a world already; a process has one at a "
                        "time");
  }
};

/// A member that asks for any rank in a world with a store: the lowest free one, claimed.
std::shared_ptr<detail::world_membership> join_at_free_rank(detail::runtime_state& state,
                                                            world_options options) {
  for (int tries = 1;; ++tries) {
    options.rank = detail::free_store_rank(options);
    try {
      return std::make_shared<detail::world_membership>(state, options);
    } catch (const detail::rank_taken&) {
      if (tries == free_rank_tries)
        throw;
    }
  }
}

} // namespace

world::world(runtime& rt, world_options options) {
  exclusive_world claim;
  try {
    auto& state = runtime_state_of(rt);
    options = detail::checked(std::move(options));
    name_ = options.name;
    if (options.rank == any_rank && !options.store.empty())
      membership_ = join_at_free_rank(state, std::move(options));
    else {
      if (options.rank == any_rank)
        options.rank = detail::request_rank(state, options);
      membership_ = std::make_shared<detail::world_membership>(state, std::move(options));
    }
    state.services->add(membership_.get());
  } catch (...) {
    membership_.reset();
    world_alive = false;
    throw;
  }
}

world::~world() { stop(); }

void world::stop() {
  if (!membership_)
    return;
  membership_->runtime().services->remove(membership_.get());
  membership_->stop();
  membership_.reset();
  world_alive = false;
}

namespace {

std::shared_ptr<detail::world_core>
live(const std::shared_ptr<detail::world_membership>& membership) {
  if (!membership)
    throw state_error("the world has stopped");
  return membership->core();
}

} // namespace

int world::rank() const noexcept { return membership_ ? membership_->options().rank : -1; }

int world::size() const noexcept {
  try {
    return live(membership_)->live_count();
  } catch (const state_error&) {
    return 0;
  }
}

const std::string& world::name() const noexcept { return name_; }

std::vector<std::string> world::members() const { return live(membership_)->live_members(); }

std::string world::member_name(int rank) const {
  const auto core = live(membership_);
  const auto* name = core->members.name(rank);
  if (name == nullptr)
    throw invalid_argument("no member has rank " + std::to_string(rank) + " in this world (ranks " +
                           "0 to " + std::to_string(core->options.max_world_size - 1) + ")");
  return *name;
}

void world::on_member_lost(std::function<void(const std::string& name, int rank)> callback) {
  live(membership_);
  membership_->callbacks().lost.add(std::move(callback));
}

void world::on_member_joined(std::function<void(const std::string& name, int rank)> callback) {
  live(membership_);
  membership_->callbacks().joined.add(std::move(callback));
}

void world::on_rejoined(std::function<void()> callback) {
  live(membership_);
  membership_->callbacks().rejoined.add(
    [callback = std::move(callback)](const std::string&, int) { callback(); });
}

rpc_group world::create_rpc_group(const std::string& name, std::vector<std::string> members) {
  return create_rpc_group(name, std::move(members), live(membership_)->options.timeout);
}

rpc_group world::create_rpc_group(const std::string& name, std::vector<std::string> members,
                                  std::chrono::milliseconds timeout) {
  return detail::create_group(live(membership_), name, std::move(members), timeout);
}

rpc_group world::create_rpc_group(const std::string& name, all_members_t all) {
  return create_rpc_group(name, all, live(membership_)->options.timeout);
}

rpc_group world::create_rpc_group(const std::string& name, all_members_t all,
                                  std::chrono::milliseconds timeout) {
  return detail::create_group(live(membership_), name, all, timeout);
}

} // namespace troupe
