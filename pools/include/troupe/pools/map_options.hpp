// How a map, starmap or imap call runs: how many items go to a worker at a time, and whether
// progress is reported. Either, both, or neither:
//
//   pool.map(f, xs);                                       // defaults
//   pool.map(f, xs, 64);                                   // chunksize 64
//   pool.map(f, xs, troupe::progress::bar("resizing"));    // a bar on stderr
//   pool.map(f, xs, {64, troupe::progress::bar()});        // both
#pragma once

#include "troupe/pools/progress.hpp"

#include <concepts>
#include <cstddef>
#include <optional>

namespace troupe {

/// The third argument of map, imap, starmap and their kin: a chunksize, a progress report, or both
/// (pool.map(f, xs, 64), pool.map(f, xs, {64, troupe::progress::bar()})).
struct map_options {
  /// Items per message to a worker; unset: ceil(n / (4 workers)) for map, 1 for imap. At least 1.
  std::optional<std::ptrdiff_t> chunksize;
  /// Progress reporting; none by default.
  progress report;

  map_options() = default;
  /// The defaults (what std::nullopt as a chunksize says).
  map_options(std::nullopt_t) {}
  /// `items_per_chunk` items per message.
  template <std::integral N>
  requires(!std::same_as<N, bool>) map_options(N items_per_chunk)
    : chunksize(static_cast<std::ptrdiff_t>(items_per_chunk)) {}
  /// `items_per_chunk` items per message, or the default.
  map_options(std::optional<std::ptrdiff_t> items_per_chunk) : chunksize(items_per_chunk) {}
  /// The default chunksize, reporting progress `how`.
  map_options(progress how) : report(std::move(how)) {}
  /// Both a chunksize and a progress report.
  map_options(std::optional<std::ptrdiff_t> items_per_chunk, progress how)
    : chunksize(items_per_chunk), report(std::move(how)) {}
};

} // namespace troupe
