#include "world_membership.hpp"

#include <iostream>

namespace troupe::detail {

world_membership::world_membership(runtime_state& rt, world_options options)
  : rt_(rt), options_(std::move(options)) {
  callbacks_->cut_off = [this](const world_core& core) { cut_off(core); };
  auto first = std::make_shared<world_core>(rt_, options_, callbacks_);
  first->join();
  std::lock_guard guard{mutex_};
  core_ = std::move(first);
  cut_off_ = core_->cut_off(); // before it was this member's: told to nobody
  if (options_.rejoin)
    rejoiner_ = std::thread{[this] { rejoin_when_cut_off(); }};
}

world_membership::~world_membership() { stop(); }

std::shared_ptr<world_core> world_membership::core() const {
  std::lock_guard guard{mutex_};
  if (!core_ || stopping_)
    throw state_error("the world has stopped");
  return core_;
}

void world_membership::stop() noexcept {
  std::shared_ptr<world_core> current, attempt;
  {
    std::lock_guard guard{mutex_};
    if (stopping_)
      return;
    stopping_ = true;
    current = core_;
    attempt = joining_;
  }
  wake_.notify_all();
  if (attempt)
    attempt->stop(); // its join throws at once (or, reaching rank 0, within rejoin_reach)
  if (rejoiner_.joinable()) {
    if (rejoiner_.get_id() == std::this_thread::get_id())
      rejoiner_.detach(); // an on_rejoined callback stops the world: the thread ends by itself
    else
      rejoiner_.join();
  }
  if (current)
    current->stop();
}

void world_membership::cut_off(const world_core& core) noexcept {
  {
    std::lock_guard guard{mutex_};
    if (&core != core_.get())
      return; // an attempt that is not this member yet (its join fails), or a retired one
    cut_off_ = true;
  }
  wake_.notify_all();
}

void world_membership::rejoin_when_cut_off() noexcept {
  std::unique_lock lock{mutex_};
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || cut_off_; });
    if (stopping_)
      return;
    cut_off_ = false;
    const auto old = core_;
    lock.unlock();
    old->retire("this was made in an earlier incarnation of " + old->label(options_.rank) +
                ", which was cut off from the world and has joined it again: make it again");
    auto fresh = join_again();
    if (!fresh)
      return; // stopped
    lock.lock();
    if (stopping_) {
      lock.unlock();
      fresh->stop();
      return;
    }
    core_ = fresh;
    cut_off_ = fresh->cut_off(); // cut off again before it became this member
    lock.unlock();
    std::cerr << "troupe: " << fresh->label(options_.rank) << " has joined the world again\n";
    callbacks_->rejoined.run(options_.name, options_.rank);
    lock.lock();
  }
}

std::shared_ptr<world_core> world_membership::join_again() noexcept {
  std::string told;
  for (;;) {
    std::string why;
    if (auto fresh = try_joining_again(why))
      return fresh;
    if (why != told) // once for each reason, not once a second
      std::cerr << "troupe: member '" << options_.name
                << "' cannot join the world again yet: " << why << "\n";
    told = why;
    std::unique_lock lock{mutex_};
    if (wake_.wait_for(lock, rejoin_pause, [this] { return stopping_; }))
      return nullptr;
  }
}

std::shared_ptr<world_core> world_membership::try_joining_again(std::string& why) noexcept {
  std::shared_ptr<world_core> fresh;
  bool joined = false;
  try {
    fresh = std::make_shared<world_core>(rt_, options_, callbacks_);
    {
      std::lock_guard guard{mutex_};
      if (stopping_)
        return nullptr;
      joining_ = fresh;
    }
    fresh->join(join_kind::again);
    joined = true;
  } catch (const std::exception& e) {
    why = e.what();
  }
  {
    std::lock_guard guard{mutex_};
    joining_.reset();
  }
  if (joined)
    return fresh;
  if (fresh)
    fresh->stop();
  return nullptr;
}

} // namespace troupe::detail
