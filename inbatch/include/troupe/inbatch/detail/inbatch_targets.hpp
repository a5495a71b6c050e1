// The four ways an inbatch_parallel call runs its items, each filling one outcome per item in
// item order: a failing item never stops the others (but for sequential with debug), and a
// lost worker or closed pool becomes the outcome of the items it took.
#pragma once

#include "troupe/actors/async_result.hpp"
#include "troupe/inbatch/detail/inbatch_chunk_task.hpp"
#include "troupe/pools/detail/outcome_writer.hpp"
#include "troupe/pools/outcome.hpp"
#include "troupe/pools/process_pool.hpp"
#include "troupe/pools/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <deque>
#include <exception>
#include <future>
#include <ranges>
#include <type_traits>
#include <utility>
#include <vector>

namespace troupe::detail {

/// What an awaitable item result (async_result, std::future, std::shared_future) yields.
template <class T>
struct awaited {
  static constexpr bool is_awaitable = false;
  using type = T;
};
template <class R>
struct awaited<async_result<R>> {
  static constexpr bool is_awaitable = true;
  using type = R;
};
template <class R>
struct awaited<std::future<R>> {
  static constexpr bool is_awaitable = true;
  using type = R;
};
template <class R>
struct awaited<std::shared_future<R>> {
  static constexpr bool is_awaitable = true;
  using type = R;
};

/// The value of item i: the method's result, awaited when it is an awaitable. Throws what the
/// item threw.
template <bool WithNamed, class Calls, class Method>
decltype(auto) item_value(const Calls& calls, Method& method, std::size_t i) {
  using direct = std::remove_cvref_t<decltype(calls.template invoke<WithNamed>(method, i))>;
  if constexpr (awaited<direct>::is_awaitable) {
    auto pending = calls.template invoke<WithNamed>(method, i);
    if constexpr (std::is_void_v<typename awaited<direct>::type>)
      std::move(pending).get();
    else
      return typename awaited<direct>::type(std::move(pending).get());
  } else {
    return calls.template invoke<WithNamed>(method, i);
  }
}

/// Fills in the outcome of item i; never throws.
template <class R, bool WithNamed, class Calls, class Method>
void run_item(const Calls& calls, Method& method, std::size_t i, outcomes<R>& out) noexcept {
  try {
    if constexpr (std::is_void_v<R>) {
      item_value<WithNamed>(calls, method, i);
      outcome_writer::value(out, i);
    } else {
      outcome_writer::value(out, i, item_value<WithNamed>(calls, method, i));
    }
  } catch (...) {
    outcome_writer::error(out, i, std::current_exception());
  }
}

template <class R, bool WithNamed, class Calls, class Method>
void run_sequential(const Calls& calls, Method& method, bool debug, outcomes<R>& out) {
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (!debug) {
      run_item<R, WithNamed>(calls, method, i, out);
    } else if constexpr (std::is_void_v<R>) {
      item_value<WithNamed>(calls, method, i);
      outcome_writer::value(out, i);
    } else {
      outcome_writer::value(out, i, item_value<WithNamed>(calls, method, i));
    }
  }
}

/// `lanes` tasks on the pool, each taking the next block of items until none is left: at most
/// `lanes` items run at once, and a trivial item costs an atomic add, not a message.
template <class R, bool WithNamed, class Calls, class Method>
void run_threads(const Calls& calls, Method& method, thread_pool& pool, std::size_t lanes,
                 outcomes<R>& out) {
  const std::size_t n = calls.size();
  const std::size_t block = std::clamp<std::size_t>(n / (lanes * 16), 1, 256);
  std::atomic<std::size_t> next{0};
  const auto lane = [&](std::size_t) {
    for (std::size_t first; (first = next.fetch_add(block)) < n;)
      for (std::size_t i = first; i < std::min(n, first + block); ++i)
        run_item<R, WithNamed>(calls, method, i, out);
  };
  try { // one job of `lanes` one-item chunks: one hand-off to the pool, not one per lane
    pool.map(lane, std::views::iota(std::size_t{0}, lanes), 1);
  } catch (...) { // the pool closed before some lane started: the others took its items
    const auto failure = std::current_exception();
    for (std::size_t i = next.load(); i < n; ++i)
      outcome_writer::error(out, i, failure);
  }
}

/// Chunks of items, each one task call naming the batch (encoded once), at most `lanes`
/// running at once. A chunk whose worker died fails its items with worker_lost.
template <class R, class Chunk, bool WithNamed, class Calls>
void run_processes(const Calls& calls, process_pool& pool, inbatch_segments& segments,
                   std::size_t lanes, std::size_t chunk_size, outcomes<R>& out) {
  if (!Chunk::registered)
    throw state_error("the chunk task of inbatch_parallel's processes target is not registered");
  const std::size_t n = calls.size();
  // Below the pool's size the window is the limit; at it, the pool is, and a second chunk per
  // worker keeps workers busy while the caller collects.
  const std::size_t window = lanes < pool.size() ? lanes : 2 * lanes;
  using batch_type = std::remove_cvref_t<decltype(calls.batch())>;
  const shared_inbatch_batch<batch_type> batch{calls.batch(), pool.listen_port() == 0, segments};
  using reply = async_result<inbatch_chunk_result<R>>;
  std::deque<std::pair<std::size_t, reply>> in_flight;
  const auto collect_oldest = [&] {
    auto [first, result] = std::move(in_flight.front());
    in_flight.pop_front();
    const std::size_t count = std::min(chunk_size, n - first);
    try {
      result.get().unpack(out, first, count);
    } catch (...) {
      for (std::size_t i = first; i < first + count; ++i)
        outcome_writer::error(out, i, std::current_exception());
    }
  };
  for (std::size_t first = 0; first < n; first += chunk_size) {
    if (in_flight.size() >= window)
      collect_oldest();
    using list = call_list<typename Calls::template value_tuple<WithNamed>>;
    typename list::type chunk;
    chunk.reserve(std::min(chunk_size, n - first));
    for (std::size_t i = first; i < std::min(n, first + chunk_size); ++i)
      list::add(chunk, calls.template values<WithNamed>(i));
    in_flight.emplace_back(first, pool.apply_async(Chunk::as_task(), batch.handle(), chunk));
  }
  while (!in_flight.empty())
    collect_oldest();
}

/// Each item's work started on the calling thread, at most `limit` awaited at once, all
/// awaited in item order.
template <class R, bool WithNamed, class Calls, class Method>
void run_async(const Calls& calls, Method& method, std::size_t limit, outcomes<R>& out) {
  using pending_type =
    std::remove_cvref_t<decltype(calls.template invoke<WithNamed>(method, std::size_t{0}))>;
  std::deque<std::pair<std::size_t, pending_type>> pending;
  const auto settle_oldest = [&] {
    auto [i, work] = std::move(pending.front());
    pending.pop_front();
    try {
      if constexpr (std::is_void_v<R>) {
        std::move(work).get();
        outcome_writer::value(out, i);
      } else {
        outcome_writer::value(out, i, std::move(work).get());
      }
    } catch (...) {
      outcome_writer::error(out, i, std::current_exception());
    }
  };
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (pending.size() >= limit)
      settle_oldest();
    try {
      pending.emplace_back(i, calls.template invoke<WithNamed>(method, i));
    } catch (...) {
      outcome_writer::error(out, i, std::current_exception());
    }
  }
  while (!pending.empty())
    settle_oldest();
}

} // namespace troupe::detail
