#include "troupe/world/world.hpp"

#include "group_state.hpp"
#include "world_core.hpp"

#include <algorithm>
#include <atomic>

namespace troupe {

namespace {

/// One world per process at a time (machin: "World could only be initialized once!").
std::atomic<bool> world_alive{false};

struct exclusive_world {
  exclusive_world() {
    if (world_alive.exchange(true))
      throw state_error("this process is a member of a world already; a process has one at a "
                        "time");
  }
};

} // namespace

world::world(runtime& rt, world_options options) {
  exclusive_world claim;
  try {
    auto& state = runtime_state_of(rt);
    options = detail::checked(std::move(options));
    if (options.rank == any_rank)
      options.rank = detail::request_rank(state, options);
    core_ = std::make_shared<detail::world_core>(state, std::move(options));
    core_->join();
    state.services->add(core_.get());
  } catch (...) {
    core_.reset();
    world_alive = false;
    throw;
  }
}

world::~world() { stop(); }

void world::stop() {
  if (!core_)
    return;
  core_->rt.services->remove(core_.get());
  core_->stop();
  core_.reset();
  world_alive = false;
}

namespace {

detail::world_core& live(const std::shared_ptr<detail::world_core>& core) {
  if (!core)
    throw state_error("the world has stopped");
  return *core;
}

} // namespace

int world::rank() const noexcept { return core_ ? core_->options.rank : -1; }
int world::size() const noexcept { return core_ ? core_->live_count() : 0; }

const std::string& world::name() const noexcept {
  static const std::string none;
  return core_ ? core_->options.name : none;
}

std::vector<std::string> world::members() const { return live(core_).live_members(); }

const std::string& world::member_name(int rank) const {
  const auto& core = live(core_);
  const auto* name = core.members.name(rank);
  if (name == nullptr)
    throw invalid_argument("no member has rank " + std::to_string(rank) + " in this world (ranks " +
                           "0 to " + std::to_string(core.options.max_world_size - 1) + ")");
  return *name;
}

void world::on_member_lost(std::function<void(const std::string& name, int rank)> callback) {
  live(core_).add_lost_callback(std::move(callback));
}

void world::on_member_joined(std::function<void(const std::string& name, int rank)> callback) {
  live(core_).members.add_joined_callback(std::move(callback));
}

rpc_group world::create_rpc_group(const std::string& name, std::vector<std::string> members) {
  return create_rpc_group(name, std::move(members), live(core_).options.timeout);
}

rpc_group world::create_rpc_group(const std::string& name, std::vector<std::string> members,
                                  std::chrono::milliseconds timeout) {
  live(core_);
  return detail::create_group(core_, name, std::move(members), timeout);
}

} // namespace troupe
