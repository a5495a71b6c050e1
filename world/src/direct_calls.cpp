#include "direct_calls.hpp"

namespace troupe::detail {

std::optional<direct_calls::ticket> direct_calls::start(int to, bytes_result reply) {
  std::lock_guard guard{mutex_};
  if (closed_ || to < 0 || static_cast<std::size_t>(to) >= reached_.size() ||
      !reached_[static_cast<std::size_t>(to)])
    return std::nullopt;
  const auto id = next_++;
  waiting_.emplace(id, waiting{to, std::move(reply)});
  return ticket{id, reached_[static_cast<std::size_t>(to)]};
}

bytes_result direct_calls::answered(std::uint64_t id, int from) {
  std::lock_guard guard{mutex_};
  auto at = waiting_.find(id);
  if (at == waiting_.end() || at->second.to != from)
    return nullptr;
  auto reply = std::move(at->second.reply);
  waiting_.erase(at);
  return reply;
}

void direct_calls::reached(int rank, caf::actor handle) {
  std::lock_guard guard{mutex_};
  if (!closed_)
    reached_[static_cast<std::size_t>(rank)] = std::move(handle);
}

std::vector<bytes_result> direct_calls::lost(int rank) {
  std::vector<bytes_result> calls;
  std::lock_guard guard{mutex_};
  reached_[static_cast<std::size_t>(rank)] = nullptr;
  for (auto at = waiting_.begin(); at != waiting_.end();) {
    if (at->second.to == rank) {
      calls.push_back(std::move(at->second.reply));
      at = waiting_.erase(at);
    } else {
      ++at;
    }
  }
  return calls;
}

void direct_calls::close() {
  std::lock_guard guard{mutex_};
  closed_ = true;
  for (auto& handle : reached_)
    handle = nullptr;
}

std::vector<bytes_result> direct_calls::stop() {
  close();
  std::vector<bytes_result> calls;
  std::lock_guard guard{mutex_};
  for (auto& [_, call] : waiting_)
    calls.push_back(std::move(call.reply));
  waiting_.clear();
  return calls;
}

} // namespace troupe::detail
