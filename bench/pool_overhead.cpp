// Per-item overhead of troupe's thread_pool against TBB, Boost.Asio's thread_pool and a plain
// std::thread split, all in one run on the same input: map(x -> x + 1) over 1,000,000 ints with
// 2 workers (automatic chunking and chunksize 1), and single apply_async(...).get() round trips.
//
//   build/bench/pool_overhead [--items=N] [--repeats=R]
//
// Every contender produces a new std::vector<int> of results, as map() does. Times are medians
// over the repeats. The last lines are `name value unit`, read by tooling.
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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Median wall time of `run` in nanoseconds, after one warm-up call.
double median_ns(int repeats, const std::function<void()>& run) {
  run();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = clock_type::now();
    run();
    times.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - start).count());
  }
  return median(times);
}

void check(const std::vector<int>& out, const std::vector<int>& in, const char* who) {
  if (out.size() != in.size() || out.back() != in.back() + 1 || out.front() != in.front() + 1) {
    std::fprintf(stderr, "%s produced a wrong result\n", who);
    std::exit(1);
  }
}

struct row {
  std::string name;
  double ns_per_item;
};

} // namespace

int main(int argc, char** argv) {
  std::size_t items = 1'000'000;
  int repeats = 15;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--items=", 8) == 0)
      items = std::stoul(argv[i] + 8);
    else if (std::strncmp(argv[i], "--repeats=", 10) == 0)
      repeats = std::stoi(argv[i] + 10);
  }
  std::vector<int> xs(items);
  std::iota(xs.begin(), xs.end(), 0);
  const auto n = static_cast<double>(items);
  auto plus_one = [](int x) { return x + 1; };
  std::vector<row> rows;

  troupe::runtime rt{argc, argv};
  troupe::thread_pool pool{rt, {.workers = workers}};
  rows.push_back({"troupe map auto", median_ns(repeats, [&] { check(pool.map(plus_one, xs), xs, "troupe"); }) / n});
  rows.push_back({"troupe map chunk 1", median_ns(std::max(3, repeats / 3), [&] {
                    check(pool.map(plus_one, xs, 1), xs, "troupe");
                  }) / n});

  tbb::task_arena arena{workers};
  auto tbb_map = [&](auto partitioner, std::size_t grain) {
    std::vector<int> out(items);
    arena.execute([&] {
      tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, items, grain),
        [&](const tbb::blocked_range<std::size_t>& r) {
          for (auto i = r.begin(); i != r.end(); ++i)
            out[i] = plus_one(xs[i]);
        },
        partitioner);
    });
    check(out, xs, "tbb");
  };
  rows.push_back({"tbb parallel_for auto", median_ns(repeats, [&] { tbb_map(tbb::auto_partitioner{}, 1); }) / n});
  rows.push_back({"tbb parallel_for chunk 1", median_ns(std::max(3, repeats / 3), [&] {
                    tbb_map(tbb::simple_partitioner{}, 1);
                  }) / n});

  boost::asio::thread_pool asio{workers};
  auto asio_map = [&](std::size_t chunk) {
    std::vector<int> out(items);
    const auto chunks = (items + chunk - 1) / chunk;
    std::latch done{static_cast<std::ptrdiff_t>(chunks)};
    for (std::size_t c = 0; c < chunks; ++c)
      boost::asio::post(asio, [&, c] {
        const auto last = std::min(items, (c + 1) * chunk);
        for (auto i = c * chunk; i < last; ++i)
          out[i] = plus_one(xs[i]);
        done.count_down();
      });
    done.wait();
    check(out, xs, "asio");
  };
  rows.push_back({"asio thread_pool auto", median_ns(repeats, [&] { asio_map((items + 4 * workers - 1) / (4 * workers)); }) / n});
  rows.push_back({"asio thread_pool chunk 1", median_ns(3, [&] { asio_map(1); }) / n});

  rows.push_back({"std::thread split", median_ns(repeats, [&] {
                    std::vector<int> out(items);
                    std::vector<std::thread> threads;
                    for (int t = 0; t < workers; ++t)
                      threads.emplace_back([&, t] {
                        const auto first = items * t / workers, last = items * (t + 1) / workers;
                        for (auto i = first; i < last; ++i)
                          out[i] = plus_one(xs[i]);
                      });
                    for (auto& t : threads)
                      t.join();
                    check(out, xs, "std::thread");
                  }) / n});

  // Round trips: one task at a time, submitter waiting for each.
  auto round_trips = [](int count, const std::function<int()>& one) {
    std::vector<double> us;
    for (int i = 0; i < count; ++i) {
      const auto start = clock_type::now();
      if (one() != 1)
        std::exit(1);
      us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
    }
    return median(us);
  };
  const double troupe_rt_us = round_trips(5000, [&] { return pool.apply_async([] { return 1; }).get(); });
  const double asio_rt_us = round_trips(5000, [&] {
    std::promise<int> p;
    auto f = p.get_future();
    boost::asio::post(asio, [&] { p.set_value(1); });
    return f.get();
  });
  asio.join();

  double tbb_auto = 0;
  for (auto& r : rows)
    if (r.name == "tbb parallel_for auto")
      tbb_auto = r.ns_per_item;
  std::printf("pool_overhead: map(x -> x + 1) over %zu ints, %d workers, median of %d runs\n",
              items, workers, repeats);
  std::printf("%-28s %12s %14s %12s\n", "contender", "ns/item", "items/s", "vs tbb auto");
  for (auto& r : rows)
    std::printf("%-28s %12.2f %14.0f %11.2fx\n", r.name.c_str(), r.ns_per_item,
                1e9 / r.ns_per_item, r.ns_per_item / tbb_auto);
  std::printf("%-28s %12.2f us median\n", "troupe apply_async().get()", troupe_rt_us);
  std::printf("%-28s %12.2f us median\n", "asio post + future", asio_rt_us);

  std::printf("map_auto_ratio_to_tbb %.3f x\n", rows[0].ns_per_item / tbb_auto);
  std::printf("map_chunk1_items_per_s %.0f items/s\n", 1e9 / rows[1].ns_per_item);
  std::printf("apply_async_roundtrip_median_us %.2f us\n", troupe_rt_us);
}
