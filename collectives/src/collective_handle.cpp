#include "troupe/collectives/collective_handle.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "collective_op.hpp"

#include "troupe/actors/error.hpp"

namespace troupe {

namespace detail {

void collective_op::finish(int source, std::exception_ptr error) noexcept {
  {
    std::lock_guard guard{mutex_};
    source_ = source;
    error_ = std::move(error);
    done_ = true;
  }
  ended_.notify_all();
}

int collective_op::wait(std::optional<std::chrono::milliseconds> timeout) {
  std::unique_lock lock{mutex_};
  if (!timeout)
    ended_.wait(lock, [&] { return done_; });
  else if (!ended_.wait_for(lock, *timeout, [&] { return done_; }))
    throw timeout_error("collective operation not done within " + readable(*timeout) +
                        " (it goes on)");
  if (error_)
    std::rethrow_exception(error_);
  return source_;
}

bool collective_op::ready() noexcept {
  std::lock_guard guard{mutex_};
  return done_;
}

} // namespace detail

bool collective_handle::ready() const { return op().ready(); }

int collective_handle::wait_for_source(std::optional<std::chrono::milliseconds> timeout) const {
  return op().wait(timeout);
}

detail::collective_op& collective_handle::op() const {
  if (!op_)
    detail::throw_empty_handle("troupe::collective_handle", "a wait");
  return *op_;
}

} // namespace troupe
