#include "troupe/pools/detail/worker_scope.hpp"

#include <unistd.h>

namespace troupe {

namespace {

std::optional<worker_identity>& current() noexcept {
  thread_local std::optional<worker_identity> worker;
  return worker;
}

} // namespace

std::optional<worker_identity> this_worker() noexcept { return current(); }

namespace detail {

worker_scope::worker_scope(std::size_t index) noexcept : previous_(current()) {
  current() = worker_identity{index, static_cast<int>(getpid())};
}

worker_scope::~worker_scope() { current() = previous_; }

} // namespace detail

} // namespace troupe
