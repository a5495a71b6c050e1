#include "troupe/pools/detail/progress_tracker.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <iostream>
#include <mutex>

namespace troupe {

namespace {

using seconds = std::chrono::duration<double>;

std::string clock_of(seconds s) {
  const auto total = static_cast<long long>(s.count() + 0.5);
  char text[32];
  std::snprintf(text, sizeof text, "%02lld:%02lld", total / 60, total % 60);
  return text;
}

} // namespace

std::string format_progress(const std::string& label, const progress_update& u) {
  constexpr int width = 30;
  std::string line = label.empty() ? "" : label + " ";
  char numbers[160];
  if (u.total && *u.total > 0) {
    const double share = static_cast<double>(u.done) / static_cast<double>(*u.total);
    const int filled = static_cast<int>(share * width);
    line += "[" + std::string(static_cast<std::size_t>(filled), '#') +
            std::string(static_cast<std::size_t>(width - filled), '.') + "] ";
    std::snprintf(numbers, sizeof numbers, "%zu/%zu %5.1f%%", u.done, *u.total, 100 * share);
  } else {
    std::snprintf(numbers, sizeof numbers, "%zu", u.done);
  }
  line += numbers;
  std::snprintf(numbers, sizeof numbers, "  %.1f it/s", u.rate);
  line += numbers;
  line += "  " + clock_of(u.elapsed);
  if (u.remaining)
    line += " < " + clock_of(*u.remaining);
  if (u.failed != 0)
    line += "  failed " + std::to_string(u.failed);
  return line;
}

progress progress::bar(std::string label, std::chrono::milliseconds interval) {
  if (isatty(STDERR_FILENO) == 0)
    return {};
  return progress{[label = std::move(label)](const progress_update& u) {
                    std::cerr << '\r' << format_progress(label, u) << "\x1b[K"
                              << (u.finished ? "\n" : "") << std::flush;
                  },
                  interval};
}

progress progress::callback(callback_type on_update, std::chrono::milliseconds interval) {
  return progress{std::move(on_update), interval};
}

namespace detail {

struct progress_tracker::state {
  progress how;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::atomic<std::size_t> done{0}, failed{0}, total;
  std::atomic<std::int64_t> next_report_ns;
  std::mutex reporting; // one report at a time; a worker that finds it busy does not wait
  bool finished = false;

  static constexpr std::size_t unknown = ~std::size_t{0};

  std::int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                start)
      .count();
  }

  progress_update snapshot(bool last) const {
    progress_update u;
    u.done = done.load();
    u.failed = failed.load();
    if (const auto t = total.load(); t != unknown)
      u.total = t;
    u.elapsed = std::chrono::steady_clock::now() - start;
    u.rate = u.elapsed.count() > 0 ? static_cast<double>(u.done) / u.elapsed.count() : 0;
    if (u.total && u.rate > 0)
      u.remaining = seconds{static_cast<double>(*u.total - std::min(*u.total, u.done)) / u.rate};
    u.finished = last;
    return u;
  }

  void report(bool last) noexcept {
    try {
      how.on_update()(snapshot(last));
    } catch (...) {
      // A reporting callback must not break the work it reports on.
    }
  }
};

progress_tracker::progress_tracker(progress how, std::optional<std::size_t> total)
  : state_(std::make_unique<state>()) {
  state_->how = std::move(how);
  state_->total = total.value_or(state::unknown);
  state_->next_report_ns = state_->how.interval().count() * 1'000'000;
}

progress_tracker::~progress_tracker() { finish(); }

void progress_tracker::completed(std::size_t items, std::size_t failed) noexcept {
  auto& s = *state_;
  s.done.fetch_add(items, std::memory_order_relaxed);
  if (failed != 0)
    s.failed.fetch_add(failed, std::memory_order_relaxed);
  const auto now = s.now_ns();
  auto due = s.next_report_ns.load(std::memory_order_relaxed);
  if (now < due)
    return;
  std::unique_lock lock{s.reporting, std::try_to_lock};
  if (!lock || s.finished ||
      !s.next_report_ns.compare_exchange_strong(due, now + s.how.interval().count() * 1'000'000))
    return;
  s.report(false);
}

void progress_tracker::set_total(std::size_t total) noexcept { state_->total = total; }

void progress_tracker::finish() noexcept {
  auto& s = *state_;
  std::lock_guard lock{s.reporting};
  if (s.finished)
    return;
  s.finished = true;
  s.report(true);
}

} // namespace detail

} // namespace troupe
