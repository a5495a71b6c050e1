// Progress of long work, as Python users get from tqdm around imap:
//
//   auto ys = pool.map(f, xs, troupe::progress::bar("encoding"));   // on stderr, if a terminal
//   for (auto y : pool.imap(f, xs, troupe::progress::bar())) ...
//   pool.map(f, xs, 64, troupe::progress::callback([](const troupe::progress_update& u) {
//     my_ui.set(u.done, u.total);                                   // draw your own
//   }));
//
// Updates come at most every `interval` (and once at the end, with the final counts), from
// whichever thread finished the work that crossed it: a callback must be quick and thread-safe
// with respect to the rest of your program. map, starmap, their _async forms, imap and
// imap_unordered take one, on thread and process pools alike.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace troupe {

/// How far a map or imap has come: what progress::bar draws and progress::callback hands over.
struct progress_update {
  std::size_t done = 0; ///< items finished, failed ones included
  std::optional<std::size_t> total; ///< unknown while a lazy imap input is still being read
  std::size_t failed = 0; ///< items whose task threw or whose worker was lost
  /// Time since the work started.
  std::chrono::duration<double> elapsed{0};
  double rate = 0; ///< items per second so far
  std::optional<std::chrono::duration<double>> remaining; ///< at that rate, when total is known
  bool finished = false; ///< the last update of this work
};

/// How a pool reports a map's or imap's progress: a bar on stderr, a callback, or nothing
/// (map_options::report).
class progress {
public:
  /// What a callback is called with.
  using callback_type = std::function<void(const progress_update&)>;

  /// A bar on stderr, redrawn in place, when stderr is a terminal; nothing otherwise.
  static progress bar(std::string label = "",
                      std::chrono::milliseconds interval = std::chrono::milliseconds{100});
  /// Calls `on_update` with the counts, at most every `interval` and once at the end.
  static progress callback(callback_type on_update,
                           std::chrono::milliseconds interval = std::chrono::milliseconds{100});

  /// No reporting (what a call without a progress argument does).
  progress() = default;
  /// Whether it reports anything.
  explicit operator bool() const noexcept { return static_cast<bool>(on_update_); }
  /// What it calls with each update.
  const callback_type& on_update() const noexcept { return on_update_; }
  /// How often it reports at most.
  std::chrono::milliseconds interval() const noexcept { return interval_; }

private:
  progress(callback_type on_update, std::chrono::milliseconds interval)
    : on_update_(std::move(on_update)), interval_(interval) {}
  callback_type on_update_;
  std::chrono::milliseconds interval_{100};
};

/// Draws `u` as a one-line bar (what progress::bar() writes): label, done/total, percentage,
/// rate, time left, failures.
std::string format_progress(const std::string& label, const progress_update& u);

} // namespace troupe
