#include "thread/lease_queue.hpp"

#include <vector>

namespace troupe::detail {

bool lease_queue::push(lease_ptr work, const std::function<bool()>& refuse) {
  std::lock_guard guard{mutex_};
  if (refuse())
    return false;
  waiting_leases_.push_back(std::move(work));
  waiting_.store(waiting_leases_.size(), std::memory_order_seq_cst);
  return true;
}

lease_ptr lease_queue::take_next() {
  std::lock_guard guard{mutex_};
  if (waiting_leases_.empty())
    return nullptr;
  running_ = std::move(waiting_leases_.front());
  waiting_leases_.pop_front();
  waiting_.store(waiting_leases_.size(), std::memory_order_seq_cst);
  return running_;
}

void lease_queue::finished() noexcept {
  std::lock_guard guard{mutex_};
  running_ = nullptr;
}

void lease_queue::put_back(lease_ptr unfinished) {
  std::lock_guard guard{mutex_};
  running_ = nullptr;
  waiting_leases_.push_front(std::move(unfinished));
  waiting_.store(waiting_leases_.size(), std::memory_order_seq_cst);
}

lease_ptr lease_queue::steal_waiting() {
  std::lock_guard guard{mutex_};
  if (waiting_leases_.empty())
    return nullptr;
  auto stolen = std::move(waiting_leases_.back());
  waiting_leases_.pop_back();
  waiting_.store(waiting_leases_.size(), std::memory_order_seq_cst);
  return stolen;
}

lease_ptr lease_queue::split_running(std::size_t limit) {
  lease_ptr victim;
  {
    std::lock_guard guard{mutex_};
    victim = running_;
  }
  if (!victim)
    return nullptr;
  const auto [first, last] = victim->take_back(lease::portion::half, limit);
  if (first == last)
    return nullptr;
  return std::make_shared<lease>(victim->job(), first, last - first, victim->attempts());
}

std::size_t lease_queue::running_unclaimed() {
  std::lock_guard guard{mutex_};
  return running_ ? running_->unclaimed() : 0;
}

bool lease_queue::has_work_to_share() {
  std::lock_guard guard{mutex_};
  return !waiting_leases_.empty() || (running_ && running_->unclaimed() > 0);
}

void lease_queue::take_out(const std::function<bool(const lease&)>& which,
                           const std::function<void(lease&)>& take) {
  std::vector<lease_ptr> taken;
  {
    std::lock_guard guard{mutex_};
    for (auto it = waiting_leases_.begin(); it != waiting_leases_.end();) {
      if (which(**it)) {
        taken.push_back(std::move(*it));
        it = waiting_leases_.erase(it);
      } else {
        ++it;
      }
    }
    waiting_.store(waiting_leases_.size(), std::memory_order_seq_cst);
    if (running_ && which(*running_))
      taken.push_back(running_); // its thread keeps running the chunk it started
  }
  for (auto& each : taken)
    take(*each);
}

} // namespace troupe::detail
