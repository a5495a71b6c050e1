// How troupe scales with the machine, beside its peers in the same run: for W = 1, 2, 4, ... up
// to --max-workers (default: the hardware threads),
//
//   - CPU-bound tasks of ~1 ms on W workers: troupe's thread pool and process pool against TBB
//     (speedup over W = 1);
//   - apply_async(f).get() in a loop from W caller threads on a pool of W workers, against TBB's
//     task_arena::enqueue + std::promise and Boost.Asio's thread_pool post + std::promise;
//   - a process pool's map(x -> x + 1) at chunksize 1 (items/s), against multiprocessing.Pool;
//   - actor calls from W threads, on one shared actor and each on its own;
//
// then one caller's round trips (thread pool, process pool, a local actor) against Asio's.
// --busy N starts N CPU-bound processes beside it for the whole run (and ends them): a machine
// shared with other work. The contenders of a figure take turns, round after round, so a slow
// spell falls on all of them; each figure is the median of the rounds.
//
//   build/bench/scale [--max-workers N] [--busy N] [--rounds R] [--window-ms MS] [--quick]
//                     [--only SECTION]
//
// SECTION, to run one part alone (while tuning it): one_caller, many_callers, actors,
// process_map or cpu.
//
// One figure per line, `name_W value unit`, for tooling (bench/check.sh).
#include "median.hpp"

#include <troupe/actors/actor.hpp>
#include <troupe/pools/process_pool.hpp>
#include <troupe/pools/thread_pool.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <latch>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using troupe::bench::median;

/// A fixed amount of CPU work: the same iterations whatever the clock says.
std::uint64_t burn(std::uint64_t iterations) {
  std::uint64_t x = iterations;
  for (std::uint64_t i = 0; i < iterations; ++i)
    x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

TROUPE_TASK(scale_burn, [](std::uint64_t iterations) { return burn(iterations); });
TROUPE_TASK(scale_plus_one, [](int x) { return x + 1; });
TROUPE_TASK(scale_echo, [](int x) { return x; });

struct settings {
  int max_workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int busy = 0;
  int rounds = 3;
  int tasks = 1024; // CPU-bound tasks of ~1 ms
  int map_items = 200'000;
  std::chrono::milliseconds window{300}; // how long each loop of calls runs
  std::string only; // one section's name, or empty for all
};

settings parse(int argc, char** argv) {
  settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "scale: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return std::atoi(argv[++i]);
    };
    if (arg == "--max-workers")
      s.max_workers = value();
    else if (arg == "--busy")
      s.busy = value();
    else if (arg == "--rounds")
      s.rounds = value();
    else if (arg == "--window-ms")
      s.window = std::chrono::milliseconds{value()};
    else if (arg == "--only" && i + 1 < argc)
      s.only = argv[++i]; // checked against the sections' names in main
    else if (arg == "--quick") {
      s.tasks = 256;
      s.map_items = 50'000;
      s.window = std::chrono::milliseconds{150};
      s.rounds = 3;
    } else if (arg.rfind("--troupe", 0) != 0) {
      std::fprintf(stderr,
                   "usage: scale [--max-workers N] [--busy N] [--rounds R] [--window-ms MS] "
                   "[--quick] [--only SECTION]\n");
      std::exit(2);
    }
  }
  return s;
}

/// CPU-bound processes beside the benchmark, ended with it (and by the kernel if it dies).
class busy_processes {
public:
  explicit busy_processes(int count) {
    for (int i = 0; i < count; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        volatile std::uint64_t sink = 0;
        for (;;)
          sink = sink + burn(1'000'000);
      }
      if (pid > 0)
        pids_.push_back(pid);
    }
  }
  ~busy_processes() {
    for (const pid_t pid : pids_) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }

private:
  std::vector<pid_t> pids_;
};

/// Iterations of burn() that take about a millisecond here.
std::uint64_t millisecond_of_work() {
  constexpr std::uint64_t probe = 2'000'000;
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i) {
    const auto start = clock_type::now();
    volatile auto sink = burn(probe);
    (void)sink;
    ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - start).count());
  }
  return static_cast<std::uint64_t>(static_cast<double>(probe) / std::max(median(ms), 1e-3));
}

/// Runs each contender once per round, in turn; each one's median.
std::vector<double> interleaved(const std::vector<std::function<double()>>& contenders,
                                int rounds) {
  std::vector<std::vector<double>> figures(contenders.size());
  for (int round = 0; round < rounds; ++round)
    for (std::size_t c = 0; c < contenders.size(); ++c)
      figures[c].push_back(contenders[c]());
  std::vector<double> out;
  for (auto& f : figures)
    out.push_back(median(f));
  return out;
}

double seconds_of(const std::function<void()>& run) {
  const auto start = clock_type::now();
  run();
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// Calls per second of `callers` threads each calling `one(thread)` in a loop for `window`.
double calls_per_s(int callers, std::chrono::milliseconds window,
                   const std::function<void(int)>& one) {
  std::atomic<std::uint64_t> calls{0};
  std::latch ready{callers + 1};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < callers; ++t)
    threads.emplace_back([&, t] {
      ready.arrive_and_wait();
      std::uint64_t mine = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        one(t);
        ++mine;
      }
      calls += mine;
    });
  ready.arrive_and_wait();
  const auto start = clock_type::now();
  std::this_thread::sleep_for(window);
  stop = true;
  for (auto& t : threads)
    t.join();
  return static_cast<double>(calls.load()) /
         std::chrono::duration<double>(clock_type::now() - start).count();
}

/// Median microseconds of single round trips, for `window`.
double round_trip_us(std::chrono::milliseconds window, const std::function<void()>& one) {
  std::vector<double> us;
  const auto until = clock_type::now() + window;
  while (clock_type::now() < until || us.size() < 100) {
    const auto start = clock_type::now();
    one();
    us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
  }
  return median(us);
}

struct counter {
  int add(int k) { return n += k; }
  int n = 0;
};

void line(const std::string& name, double value, const char* unit) {
  std::printf("%s %.6g %s\n", name.c_str(), value, unit);
  std::fflush(stdout);
}

std::vector<int> worker_counts(int max) {
  std::vector<int> counts;
  for (int w = 1; w < max; w *= 2)
    counts.push_back(w);
  counts.push_back(max);
  return counts;
}

/// CPU-bound tasks: troupe's thread pool, process pool and TBB; speedups over W = 1.
void cpu_tasks(troupe::runtime& rt, const settings& s, std::uint64_t work) {
  const std::vector<std::uint64_t> tasks(static_cast<std::size_t>(s.tasks), work);
  double thread_one = 0, process_one = 0, tbb_one = 0;
  for (const int w : worker_counts(s.max_workers)) {
    troupe::thread_pool threads{rt, {.workers = w}};
    troupe::process_pool procs{rt, {.workers = w}};
    (void)procs.map(scale_plus_one, std::vector<int>(static_cast<std::size_t>(w)), 1); // started
    tbb::task_arena arena{w};
    const auto figures =
      interleaved({[&] { return seconds_of([&] { (void)threads.map(burn, tasks, 1); }); },
                   [&] { return seconds_of([&] { (void)procs.map(scale_burn, tasks, 1); }); },
                   [&] {
                     return seconds_of([&] {
                       std::vector<std::uint64_t> out(tasks.size());
                       arena.execute([&] {
                         tbb::parallel_for(
                           tbb::blocked_range<std::size_t>(0, tasks.size(), 1),
                           [&](const auto& r) {
                             for (auto i = r.begin(); i != r.end(); ++i)
                               out[i] = burn(tasks[i]);
                           },
                           tbb::simple_partitioner{});
                       });
                     });
                   }},
                  s.rounds);
    if (w == 1) {
      thread_one = figures[0];
      process_one = figures[1];
      tbb_one = figures[2];
    }
    line("thread_pool_cpu_speedup_" + std::to_string(w), thread_one / figures[0], "x");
    line("process_pool_cpu_speedup_" + std::to_string(w), process_one / figures[1], "x");
    line("tbb_cpu_speedup_" + std::to_string(w), tbb_one / figures[2], "x");
  }
}

/// apply_async(f).get() from W callers on W workers, against TBB and Asio.
void round_trips_from_many(troupe::runtime& rt, const settings& s) {
  for (const int w : worker_counts(s.max_workers)) {
    troupe::thread_pool pool{rt, {.workers = w}};
    tbb::task_arena arena{w};
    boost::asio::thread_pool asio{static_cast<std::size_t>(w)};
    const auto figures = interleaved({[&] {
                                        return calls_per_s(w, s.window, [&](int) {
                                          (void)pool.apply_async([] { return 1; }).get();
                                        });
                                      },
                                      [&] {
                                        return calls_per_s(w, s.window, [&](int) {
                                          std::promise<int> p;
                                          auto f = p.get_future();
                                          arena.enqueue([&] { p.set_value(1); });
                                          (void)f.get();
                                        });
                                      },
                                      [&] {
                                        return calls_per_s(w, s.window, [&](int) {
                                          std::promise<int> p;
                                          auto f = p.get_future();
                                          boost::asio::post(asio, [&] { p.set_value(1); });
                                          (void)f.get();
                                        });
                                      }},
                                     s.rounds);
    const auto suffix = "_" + std::to_string(w);
    line("apply_async_calls_per_s" + suffix, figures[0], "calls/s");
    line("tbb_enqueue_calls_per_s" + suffix, figures[1], "calls/s");
    line("asio_post_calls_per_s" + suffix, figures[2], "calls/s");
    line("apply_async_ratio_to_tbb" + suffix, figures[0] / figures[1], "x");
    line("apply_async_ratio_to_asio" + suffix, figures[0] / figures[2], "x");
    asio.join();
  }
}

/// multiprocessing.Pool's map at chunksize 1 with `workers` processes, items/s (0 if Python
/// is missing).
double mp_pool_chunk1(int workers, int items) {
  const std::string command = std::string{"/usr/bin/python3 "} + TROUPE_BENCH_DIR +
                              "/mp_pool.py --chunk1 " + std::to_string(workers) + " " +
                              std::to_string(items) + " 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr)
    return 0;
  double rate = 0;
  char name[64];
  while (std::fscanf(pipe, "%63s %lf", name, &rate) == 2) {
  }
  ::pclose(pipe);
  return rate;
}

/// A process pool's map at chunksize 1, items/s, against multiprocessing.Pool.
void process_map_chunk1(troupe::runtime& rt, const settings& s) {
  std::vector<int> items(static_cast<std::size_t>(s.map_items));
  std::iota(items.begin(), items.end(), 0);
  for (const int w : worker_counts(s.max_workers)) {
    troupe::process_pool procs{rt, {.workers = w}};
    (void)procs.map(scale_plus_one, std::vector<int>(static_cast<std::size_t>(w)), 1);
    const auto troupe_rate =
      interleaved({[&] {
                    return static_cast<double>(items.size()) /
                           seconds_of([&] { (void)procs.map(scale_plus_one, items, 1); });
                  }},
                  s.rounds)[0];
    line("process_map_chunk1_items_per_s_" + std::to_string(w), troupe_rate, "items/s");
    if (const double mp = mp_pool_chunk1(w, s.map_items / 4); mp > 0)
      line("mp_pool_chunk1_items_per_s_" + std::to_string(w), mp, "items/s");
  }
}

/// Actor calls from W threads: all on one actor, and each on its own.
void actor_calls(troupe::runtime& rt, const settings& s) {
  for (const int w : worker_counts(s.max_workers)) {
    auto shared = troupe::spawn<counter>(rt);
    std::vector<troupe::actor<counter>> own;
    for (int t = 0; t < w; ++t)
      own.push_back(troupe::spawn<counter>(rt));
    const auto figures = interleaved(
      {[&] {
         return calls_per_s(w, s.window, [&](int) { (void)shared.call(&counter::add, 1).get(); });
       },
       [&] {
         return calls_per_s(w, s.window, [&](int t) {
           (void)own[static_cast<std::size_t>(t)].call(&counter::add, 1).get();
         });
       }},
      s.rounds);
    line("actor_shared_calls_per_s_" + std::to_string(w), figures[0], "calls/s");
    line("actor_own_calls_per_s_" + std::to_string(w), figures[1], "calls/s");
  }
}

/// One caller's round trips: thread pool, process pool and a local actor, against Asio's.
void one_caller(troupe::runtime& rt, const settings& s) {
  troupe::thread_pool pool{rt, {.workers = 2}};
  troupe::process_pool procs{rt, {.workers = 2}};
  (void)procs.apply(scale_echo, 1);
  auto actor = troupe::spawn<counter>(rt);
  boost::asio::thread_pool asio{2};
  const auto asio_one = [&] {
    std::promise<int> p;
    auto f = p.get_future();
    boost::asio::post(asio, [&] { p.set_value(1); });
    (void)f.get();
  };
  const auto us = interleaved(
    {[&] {
       return round_trip_us(s.window, [&] { (void)pool.apply_async([] { return 1; }).get(); });
     },
     [&] { return round_trip_us(s.window, [&] { (void)procs.apply_async(scale_echo, 1).get(); }); },
     [&] { return round_trip_us(s.window, [&] { (void)actor.call(&counter::add, 1).get(); }); },
     [&] { return round_trip_us(s.window, asio_one); }},
    s.rounds);
  line("apply_async_roundtrip_median_us", us[0], "us");
  line("process_apply_async_roundtrip_median_us", us[1], "us");
  line("actor_call_local_median_us", us[2], "us");
  line("asio_post_roundtrip_median_us", us[3], "us");
  line("apply_async_one_caller_ratio_to_asio", us[3] / us[0], "x");
  line("process_apply_async_one_caller_ratio_to_asio", us[3] / us[1], "x");
  asio.join();
}

} // namespace

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv}; // a pool's worker process never returns from here
  const auto s = parse(argc, argv);
  if (s.max_workers < 1 || s.busy < 0 || s.rounds < 1) {
    std::fprintf(stderr, "scale: --max-workers and --rounds must be at least 1, --busy 0\n");
    return 2;
  }
  const auto work = millisecond_of_work(); // measured before the machine is made busy
  const std::vector<std::pair<std::string, std::function<void()>>> sections{
    {"one_caller", [&] { one_caller(rt, s); }},
    {"many_callers", [&] { round_trips_from_many(rt, s); }},
    {"actors", [&] { actor_calls(rt, s); }},
    {"process_map", [&] { process_map_chunk1(rt, s); }},
    {"cpu", [&] { cpu_tasks(rt, s, work); }},
  };
  if (!s.only.empty() && std::none_of(sections.begin(), sections.end(), [&](const auto& section) {
        return section.first == s.only;
      })) {
    std::fprintf(stderr, "scale: --only takes one of:");
    for (const auto& section : sections)
      std::fprintf(stderr, " %s", section.first.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  // TBB caps its workers at the hardware threads unless told otherwise; its arenas here ask for
  // as many as troupe's pools get.
  tbb::global_control tbb_threads{tbb::global_control::max_allowed_parallelism,
                                  static_cast<std::size_t>(std::max(s.max_workers, 2))};
  busy_processes busy{s.busy};
  std::printf("# scale: up to %d workers, %d busy processes beside it, %u hardware threads, "
              "%d rounds\n",
              s.max_workers, s.busy, std::thread::hardware_concurrency(), s.rounds);
  line("busy_processes", s.busy, "processes");
  for (const auto& [name, run] : sections)
    if (s.only.empty() || s.only == name)
      run();
  return 0;
}
