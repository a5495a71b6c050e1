#include "lost_work.hpp"

#include "troupe/actors/error.hpp"

namespace troupe::detail {

void fail_chunks(job& target, std::size_t first, std::size_t last,
                 std::exception_ptr why) noexcept {
  if (first >= last)
    return;
  target.abandon(first, last, std::move(why));
  target.ended(last - first);
}

void run_unstarted_elsewhere(lease& work, const give_back_fn& give_back) {
  const auto [first, last] = work.take_back(lease::portion::all, lease::max_chunks);
  if (first < last)
    give_back(work.job(), first, last, work.attempts());
}

std::size_t fail_unstarted(lease& work, const std::exception_ptr& why, slot_meter* meter) noexcept {
  const auto [first, last] = work.take_back(lease::portion::all, lease::max_chunks);
  if (meter != nullptr && first < last)
    meter->count(0, last - first);
  fail_chunks(*work.job(), first, last, why);
  return last - first;
}

void retry_or_fail(lease& work, std::size_t chunk, std::size_t max_retries,
                   const std::exception_ptr& lost, const give_back_fn& give_back,
                   slot_meter& meter) {
  if (work.attempts() < max_retries) {
    give_back(work.job(), chunk, chunk + 1, work.attempts() + 1);
    return;
  }
  meter.count(1, 1);
  fail_chunks(*work.job(), chunk, chunk + 1, lost);
}

std::exception_ptr as_worker_failure(std::exception_ptr caught, const std::string& worker) {
  try {
    std::rethrow_exception(caught);
  } catch (const error&) {
    return caught;
  } catch (const std::exception& e) {
    return std::make_exception_ptr(worker_lost(worker + " failed: " + e.what()));
  } catch (...) {
    return std::make_exception_ptr(worker_lost(worker + " failed with a non-standard exception"));
  }
}

} // namespace troupe::detail
