// troupe's process_pool against Python's multiprocessing.Pool (fork, 2 workers; bench/mp_pool.py
// run with Debian's /usr/bin/python3, what users install), in the same run: map(x -> x + 1) over
// 100,000 ints at chunksize 1 and with automatic chunking, pool start-up for 2 workers, and the
// speedup of 200 CPU-bound tasks on 2 workers over 1. Each task does a fixed amount of work (a
// fixed number of iterations, not a spin on the clock), so time a worker spends pre-empted is not
// counted as work. Five rounds, troupe and the peer interleaved; medians are reported.
//
//   build/bench/process_pool
//
// The last lines are `name value unit`, read by tooling.
#include "median.hpp"

#include <troupe/pools/process_pool.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace {

// Iterations of a dependent LCG chain: about 1 ms here in C++; the Python peer's loop does
// fewer (about 1 ms there too): the figure compared is each pool's own speedup.
constexpr std::uint64_t cpp_work = 1'000'000;
constexpr int python_work = 18'000;
constexpr int rounds = 5;
constexpr int cpu_tasks = 200;

} // namespace

TROUPE_TASK(plus_one, [](int x) { return x + 1; });
TROUPE_TASK(fixed_work, [](int seed) {
  auto x = static_cast<std::uint64_t>(seed);
  for (std::uint64_t i = 0; i < cpp_work; ++i)
    x = (x * 1103515245u + 12345u) & 0x7FFFFFFFu;
  return static_cast<int>(x);
});

namespace {

using clock_type = std::chrono::steady_clock;
using figures = std::map<std::string, double>;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

std::string first_line_of(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe{popen(command.c_str(), "r"), pclose};
  char line[256] = "";
  if (!pipe || std::fgets(line, sizeof line, pipe.get()) == nullptr)
    return "";
  std::string out = line;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
    out.pop_back();
  return out;
}

/// One round of the Python peer: its `name value` lines.
figures python_round() {
  figures out;
  const std::string command = std::string{"/usr/bin/python3 "} + TROUPE_BENCH_DIR + "/mp_pool.py " +
                              std::to_string(python_work);
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

double cpu_seconds(troupe::runtime& rt, int workers) {
  troupe::process_pool pool{rt, {.workers = workers}};
  (void)pool.map(fixed_work, std::vector<int>(static_cast<std::size_t>(workers)), 1);
  const auto start = clock_type::now();
  (void)pool.map(fixed_work, std::vector<int>(cpu_tasks), 1);
  return seconds_since(start);
}

/// One round of troupe, the same figures as the peer's.
figures troupe_round(troupe::runtime& rt, const std::vector<int>& items) {
  figures out;
  auto start = clock_type::now();
  troupe::process_pool pool{rt, {.workers = 2}};
  (void)pool.map(plus_one, std::vector<int>{0, 1}, 1); // both workers up and answering
  out["startup_ms"] = seconds_since(start) * 1000;
  start = clock_type::now();
  check(pool.map(plus_one, items, 1), items.size());
  out["chunk1_items_per_s"] = static_cast<double>(items.size()) / seconds_since(start);
  start = clock_type::now();
  check(pool.map(plus_one, items), items.size());
  out["auto_items_per_s"] = static_cast<double>(items.size()) / seconds_since(start);
  const double one = cpu_seconds(rt, 1), two = cpu_seconds(rt, 2);
  out["cpu_task_ms"] = one / cpu_tasks * 1000;
  out["cpu_speedup_2_vs_1"] = one / two;
  return out;
}

using troupe::bench::median;

} // namespace

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv}; // worker processes of the pools below start here too
  std::vector<int> items(100'000);
  std::iota(items.begin(), items.end(), 0);

  std::map<std::string, std::vector<double>> ours, peer;
  for (int round = 0; round < rounds; ++round) {
    for (const auto& [name, value] : troupe_round(rt, items))
      ours[name].push_back(value);
    for (const auto& [name, value] : python_round())
      peer[name].push_back(value);
  }
  const auto m = [](std::map<std::string, std::vector<double>>& in, const char* name) {
    return median(in[name]);
  };
  std::printf("process_pool: 2 workers, %d rounds interleaved with the peer, medians\n", rounds);
  std::printf("peer: multiprocessing.Pool (fork), %s\n",
              first_line_of("/usr/bin/python3 --version 2>&1").c_str());
  std::printf("%-38s %14s %14s %8s\n", "", "troupe", "mp.Pool", "ratio");
  const auto row = [&](const char* label, const char* name, const char* format) {
    std::printf(format, label, m(ours, name), m(peer, name), m(ours, name) / m(peer, name));
  };
  row("items/s, map chunksize 1", "chunk1_items_per_s", "%-38s %14.0f %14.0f %7.2fx\n");
  row("items/s, map automatic chunks", "auto_items_per_s", "%-38s %14.0f %14.0f %7.2fx\n");
  row("start-up to first answers, ms", "startup_ms", "%-38s %14.1f %14.1f %7.2fx\n");
  row("CPU task on 1 worker, ms", "cpu_task_ms", "%-38s %14.2f %14.2f %7.2fx\n");
  row("CPU speedup, 2 workers over 1", "cpu_speedup_2_vs_1", "%-38s %14.2f %14.2f %7.2fx\n");
  std::printf("process_chunk1_ratio_to_mp_pool %.2f x\n",
              m(ours, "chunk1_items_per_s") / m(peer, "chunk1_items_per_s"));
  std::printf("process_auto_ratio_to_mp_pool %.3f x\n",
              m(ours, "auto_items_per_s") / m(peer, "auto_items_per_s"));
  std::printf("process_startup_ms %.1f ms\n", m(ours, "startup_ms"));
  std::printf("process_cpu_speedup_2_vs_1 %.2f x\n", m(ours, "cpu_speedup_2_vs_1"));
  std::printf("process_cpu_speedup_ratio_to_mp_pool %.3f x\n",
              m(ours, "cpu_speedup_2_vs_1") / m(peer, "cpu_speedup_2_vs_1"));
}
