// troupe's process_pool against Python's multiprocessing.Pool (fork, 2 workers; bench/mp_pool.py,
// run by this benchmark in the same run): map(x -> x + 1) over 100,000 ints at chunksize 1 and
// with automatic chunking, pool start-up for 2 workers, and the speedup of 400 CPU-bound tasks
// of ~1 ms on 2 workers over 1.
//
//   build/bench/process_pool
//
// The last lines are `name value unit`, read by tooling.
#include <troupe/pools/process_pool.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

TROUPE_TASK(plus_one, [](int x) { return x + 1; });
TROUPE_TASK(spin_1ms, [](int) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds{1};
  while (std::chrono::steady_clock::now() < until) {
  }
  return 0;
});

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// Runs the Python peer; its `name value` lines.
std::map<std::string, double> run_python_peer() {
  std::map<std::string, double> out;
  const std::string command = std::string{"python3 "} + TROUPE_BENCH_DIR + "/mp_pool.py";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe{popen(command.c_str(), "r"), pclose};
  if (!pipe)
    return out;
  char name[64];
  double value = 0;
  while (std::fscanf(pipe.get(), "%63s %lf", name, &value) == 2)
    out[name] = value;
  return out;
}

void check(const std::vector<int>& ys, std::size_t n) {
  if (ys.size() != n || ys.back() != static_cast<int>(n)) {
    std::fprintf(stderr, "wrong result\n");
    std::exit(1);
  }
}

} // namespace

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv}; // worker processes of the pools below start here too
  std::vector<int> items(100'000);
  std::iota(items.begin(), items.end(), 0);

  auto start = clock_type::now();
  troupe::process_pool pool{rt, {.workers = 2}};
  (void)pool.map(plus_one, std::vector<int>{0, 1}, 1); // both workers up and answering
  const double startup_ms = seconds_since(start) * 1000;

  start = clock_type::now();
  check(pool.map(plus_one, items, 1), items.size());
  const double chunk1 = items.size() / seconds_since(start);
  start = clock_type::now();
  check(pool.map(plus_one, items), items.size());
  const double automatic = items.size() / seconds_since(start);

  const auto spin = [&](int workers) {
    troupe::process_pool p{rt, {.workers = workers}};
    (void)p.map(spin_1ms, std::vector<int>(static_cast<std::size_t>(workers)), 1);
    const auto t0 = clock_type::now();
    (void)p.map(spin_1ms, std::vector<int>(400));
    return seconds_since(t0);
  };
  const double one = spin(1), two = spin(2);

  const auto peer = run_python_peer();
  const auto of = [&](const char* key) {
    auto it = peer.find(key);
    return it == peer.end() ? 0.0 : it->second;
  };
  std::printf("process_pool: 2 workers, map(x -> x + 1) over 100,000 ints\n");
  std::printf("%-34s %14s %14s %8s\n", "", "troupe", "mp.Pool", "ratio");
  std::printf("%-34s %14.0f %14.0f %7.1fx\n", "items/s, chunksize 1", chunk1,
              of("chunk1_items_per_s"), chunk1 / of("chunk1_items_per_s"));
  std::printf("%-34s %14.0f %14.0f %7.2fx\n", "items/s, automatic chunks", automatic,
              of("auto_items_per_s"), automatic / of("auto_items_per_s"));
  std::printf("%-34s %14.1f %14.1f\n", "start-up to first answers, ms", startup_ms,
              of("startup_ms"));
  std::printf("400 tasks of 1 ms: %.0f ms on 1 worker, %.0f ms on 2\n", one * 1000, two * 1000);
  std::printf("process_chunk1_ratio_to_mp_pool %.2f x\n", chunk1 / of("chunk1_items_per_s"));
  std::printf("process_auto_ratio_to_mp_pool %.3f x\n", automatic / of("auto_items_per_s"));
  std::printf("process_startup_ms %.1f ms\n", startup_ms);
  std::printf("process_cpu_speedup_2_vs_1 %.2f x\n", one / two);
}
