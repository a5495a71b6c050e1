// Per-item overhead of troupe's thread_pool against TBB, Boost.Asio's thread_pool and a plain
// std::thread split, all in one run on the same input: map(x -> x + 1) over 1,000,000 ints with
// 2 workers (automatic chunking and chunksize 1), the automatic contenders again over 10^8 ints
// (at 10^6 a whole map takes well under a millisecond and measures wake-ups more than the pool),
// and single apply_async(...).get() round trips.
//
//   build/bench/pool_overhead [--items=N] [--big-items=N] [--repeats=R]
//
// Every contender produces a new std::vector<int> of results, as map() does. The contenders of a
// tier take turns, one run each per round, so a slow spell of the machine falls on all of them;
// times are medians over the rounds. The last lines are `name value unit`, read by tooling.
#include "median.hpp"

#include <troupe/troupe.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <future>
#include <latch>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
constexpr int workers = 2;

using troupe::bench::median;

void check(const std::vector<int>& out, const std::vector<int>& in, const char* who) {
  if (out.size() != in.size() || out.back() != in.back() + 1 || out.front() != in.front() + 1) {
    std::fprintf(stderr, "%s produced a wrong result\n", who);
    std::exit(1);
  }
}

/// A way to map x -> x + 1 over the input into a new vector.
struct contender {
  std::string name;
  std::function<std::vector<int>(const std::vector<int>&)> map;
  bool fine_grained = false; // chunksize 1: too slow to run over the big input
};

/// Runs every contender once per round, in turn; the median ns per item of each.
std::vector<double> interleaved_ns_per_item(const std::vector<contender>& contenders,
                                            const std::vector<int>& xs, int rounds) {
  std::vector<std::vector<double>> times(contenders.size());
  for (int round = -1; round < rounds; ++round) // round -1 warms up
    for (std::size_t c = 0; c < contenders.size(); ++c) {
      const auto start = clock_type::now();
      check(contenders[c].map(xs), xs, contenders[c].name.c_str());
      if (round >= 0)
        times[c].push_back(
          std::chrono::duration<double, std::nano>(clock_type::now() - start).count());
    }
  std::vector<double> out;
  for (auto& t : times)
    out.push_back(median(t) / static_cast<double>(xs.size()));
  return out;
}

/// Median microseconds of `count` single round trips.
double round_trip_us(int count, const std::function<int()>& one) {
  std::vector<double> us;
  for (int i = 0; i < count; ++i) {
    const auto start = clock_type::now();
    if (one() != 1)
      std::exit(1);
    us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
  }
  return median(us);
}

void print_tier(const char* title, const std::vector<contender>& contenders,
                const std::vector<double>& ns, double tbb_auto) {
  std::printf("%s\n%-28s %12s %14s %12s\n", title, "contender", "ns/item", "items/s",
              "vs tbb auto");
  for (std::size_t c = 0; c < contenders.size(); ++c)
    std::printf("%-28s %12.3f %14.0f %11.2fx\n", contenders[c].name.c_str(), ns[c], 1e9 / ns[c],
                ns[c] / tbb_auto);
}

} // namespace

int main(int argc, char** argv) {
  std::size_t items = 1'000'000, big_items = 100'000'000;
  int repeats = 15;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--items=", 8) == 0)
      items = std::stoul(argv[i] + 8);
    else if (std::strncmp(argv[i], "--big-items=", 12) == 0)
      big_items = std::stoul(argv[i] + 12);
    else if (std::strncmp(argv[i], "--repeats=", 10) == 0)
      repeats = std::stoi(argv[i] + 10);
  }
  const auto plus_one = [](int x) { return x + 1; };

  troupe::runtime rt{argc, argv};
  troupe::thread_pool pool{rt, {.workers = workers}};
  tbb::task_arena arena{workers};
  boost::asio::thread_pool asio{workers};

  const auto tbb_map = [&](const std::vector<int>& xs, auto partitioner, std::size_t grain) {
    std::vector<int> out(xs.size());
    arena.execute([&] {
      tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, xs.size(), grain),
        [&](const tbb::blocked_range<std::size_t>& r) {
          for (auto i = r.begin(); i != r.end(); ++i)
            out[i] = plus_one(xs[i]);
        },
        partitioner);
    });
    return out;
  };
  const auto asio_map = [&](const std::vector<int>& xs, std::size_t chunk) {
    std::vector<int> out(xs.size());
    const auto chunks = (xs.size() + chunk - 1) / chunk;
    std::latch done{static_cast<std::ptrdiff_t>(chunks)};
    for (std::size_t c = 0; c < chunks; ++c)
      boost::asio::post(asio, [&, c] {
        const auto last = std::min(xs.size(), (c + 1) * chunk);
        for (auto i = c * chunk; i < last; ++i)
          out[i] = plus_one(xs[i]);
        done.count_down();
      });
    done.wait();
    return out;
  };
  const auto thread_split = [&](const std::vector<int>& xs) {
    std::vector<int> out(xs.size());
    std::vector<std::thread> threads;
    for (int t = 0; t < workers; ++t)
      threads.emplace_back([&, t] {
        const auto first = xs.size() * t / workers, last = xs.size() * (t + 1) / workers;
        for (auto i = first; i < last; ++i)
          out[i] = plus_one(xs[i]);
      });
    for (auto& t : threads)
      t.join();
    return out;
  };
  const std::vector<contender> contenders{
    {"troupe map auto", [&](const auto& xs) { return pool.map(plus_one, xs); }},
    {"troupe map chunk 1", [&](const auto& xs) { return pool.map(plus_one, xs, 1); }, true},
    {"tbb parallel_for auto",
     [&](const auto& xs) { return tbb_map(xs, tbb::auto_partitioner{}, 1); }},
    {"tbb parallel_for chunk 1",
     [&](const auto& xs) { return tbb_map(xs, tbb::simple_partitioner{}, 1); }, true},
    {"asio thread_pool auto",
     [&](const auto& xs) { return asio_map(xs, (xs.size() + 4 * workers - 1) / (4 * workers)); }},
    {"std::thread split", thread_split},
  };
  const std::vector<contender> coarse{contenders[0], contenders[2], contenders[4], contenders[5]};
  const auto index_of = [](const std::vector<contender>& list, const std::string& name) {
    for (std::size_t c = 0; c < list.size(); ++c)
      if (list[c].name == name)
        return c;
    return std::size_t{0};
  };

  std::vector<int> xs(items);
  std::iota(xs.begin(), xs.end(), 0);
  const auto small = interleaved_ns_per_item(contenders, xs, repeats);
  // Asio with one post per item is in a tier of its own: at ~1 us a post it would dominate a round.
  std::vector<int> few(std::min<std::size_t>(items, 100'000));
  std::iota(few.begin(), few.end(), 0);
  const auto asio_chunk1 = interleaved_ns_per_item(
    {{"asio thread_pool chunk 1", [&](const auto& v) { return asio_map(v, 1); }}}, few, 3)[0];
  xs.clear();
  xs.shrink_to_fit();

  std::vector<int> big(big_items);
  std::iota(big.begin(), big.end(), 0);
  const auto large = interleaved_ns_per_item(coarse, big, std::max(3, repeats / 3));
  big.clear();
  big.shrink_to_fit();

  const double troupe_rt_us =
    round_trip_us(5000, [&] { return pool.apply_async([] { return 1; }).get(); });
  const double asio_rt_us = round_trip_us(5000, [&] {
    std::promise<int> p;
    auto f = p.get_future();
    boost::asio::post(asio, [&] { p.set_value(1); });
    return f.get();
  });
  asio.join();

  const double tbb_small = small[index_of(contenders, "tbb parallel_for auto")];
  const double tbb_large = large[index_of(coarse, "tbb parallel_for auto")];
  std::printf("pool_overhead: map(x -> x + 1), %d workers, contenders interleaved, medians\n",
              workers);
  print_tier(
    ("over " + std::to_string(items) + " ints, " + std::to_string(repeats) + " rounds").c_str(),
    contenders, small, tbb_small);
  std::printf("%-28s %12.3f %14.0f %11.2fx  (over %zu ints)\n", "asio thread_pool chunk 1",
              asio_chunk1, 1e9 / asio_chunk1, asio_chunk1 / tbb_small, few.size());
  print_tier(("over " + std::to_string(big_items) + " ints, " +
              std::to_string(std::max(3, repeats / 3)) + " rounds")
               .c_str(),
             coarse, large, tbb_large);
  std::printf("%-28s %12.2f us median\n", "troupe apply_async().get()", troupe_rt_us);
  std::printf("%-28s %12.2f us median\n", "asio post + future", asio_rt_us);

  std::printf("map_auto_ratio_to_tbb %.3f x\n", small[0] / tbb_small);
  std::printf("map_auto_1e8_ratio_to_tbb %.3f x\n", large[0] / tbb_large);
  std::printf("map_chunk1_items_per_s %.0f items/s\n", 1e9 / small[1]);
  std::printf("apply_async_roundtrip_median_us %.2f us\n", troupe_rt_us);
}
