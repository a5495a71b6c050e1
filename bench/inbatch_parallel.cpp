// inbatch_parallel against the plain pools it runs on, in the same run: a batch of 100,000
// items of trivial work (x -> x + 1, results gathered into a std::vector<int> by post) beside
// thread_pool.map / process_pool.map over the same items, and 200 items of about 1 ms of fixed
// CPU work (a fixed number of iterations, not a spin on the clock) on 2 workers against 1.
// Two workers everywhere; medians are reported. Each group (threads, processes, CPU-bound work)
// interleaves its contenders round by round. The
// processes figures are for a method that reads the batch (const&) and one that may change it
// (a copy of the batch per message to a worker).
//
//   build/bench/inbatch_parallel
//
// The last lines are `name value unit`, read by tooling: the ratios are inbatch's time over the
// plain pool's (goal: at most 1.5), the speedups 1-worker time over 2-worker time (goal: 1.8).
#include "median.hpp"

#include <troupe/inbatch/inbatch_parallel.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <vector>

namespace {

constexpr std::uint64_t cpu_work = 1'000'000; // about 1 ms here
constexpr int rounds = 5; // of the CPU-bound items
constexpr int trivial_rounds = 201; // of the trivial items on threads (each under a ms)
constexpr int process_rounds = 51; // of the trivial items in processes (a few ms each)
constexpr std::size_t trivial_items = 100'000;
constexpr std::size_t cpu_items = 200;

int fixed_work(std::size_t seed) {
  auto x = static_cast<std::uint64_t>(seed);
  for (std::uint64_t i = 0; i < cpu_work; ++i)
    x = (x * 1103515245u + 12345u) & 0x7FFFFFFFu;
  return static_cast<int>(x);
}

struct int_batch {
  std::vector<int> values;
  std::size_t size() const { return values.size(); }
  template <class Archive>
  void serialize(Archive& ar) {
    ar(values);
  }
};

} // namespace

TROUPE_TASK(plus_one, [](int x) { return x + 1; });
// A method that only reads the batch takes it by const reference: the workers then read the
// batch they decoded once; one that takes it by reference gets a copy per message.
TROUPE_TASK(item_plus_one, [](const int_batch& b, std::size_t i) { return b.values[i] + 1; });
TROUPE_TASK(item_plus_one_mutable, [](int_batch& b, std::size_t i) { return b.values[i] + 1; });
TROUPE_TASK(item_work, [](int_batch&, std::size_t i) { return fixed_work(i); });

namespace {

using clock_type = std::chrono::steady_clock;

/// A post that hands the values over, as map returns them.
const auto gather = [](int_batch&, troupe::outcomes<int>& out) { return std::move(out).values(); };

using troupe::bench::median;

void check(const std::vector<int>& ys, const int_batch& b, const char* who) {
  if (ys.size() != b.values.size() || ys.back() != b.values.back() + 1) {
    std::fprintf(stderr, "%s produced a wrong result\n", who);
    std::exit(1);
  }
}

/// Runs every contender once per round, in turn; each one's median seconds.
std::map<std::string, double>
interleaved(const std::vector<std::pair<std::string, std::function<void()>>>& contenders,
            int rounds) {
  std::map<std::string, std::vector<double>> times;
  for (int round = -1; round < rounds; ++round) // round -1 warms up (and starts processes)
    for (const auto& [name, run] : contenders) {
      const auto start = clock_type::now();
      run();
      if (round >= 0)
        times[name].push_back(std::chrono::duration<double>(clock_type::now() - start).count());
    }
  std::map<std::string, double> out;
  for (auto& [name, t] : times)
    out[name] = median(t);
  return out;
}

} // namespace

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv}; // a worker process never gets past this line
  troupe::thread_pool threads{rt, {.workers = 2}};
  troupe::process_pool procs{rt, {.workers = 2}};

  int_batch trivial;
  trivial.values.resize(trivial_items);
  std::iota(trivial.values.begin(), trivial.values.end(), 0);
  int_batch cpu;
  cpu.values.resize(cpu_items);

  auto on_threads = troupe::inbatch_parallel(
    rt, troupe::inits::indices, [](int_batch& b, std::size_t i) { return b.values[i] + 1; }, gather,
    {.n_workers = 2, .threads = &threads});
  auto in_processes = troupe::inbatch_parallel(
    rt, troupe::inits::indices, item_plus_one, gather,
    {.target = troupe::inbatch_target::processes, .n_workers = 2, .processes = &procs});
  auto in_processes_mutable = troupe::inbatch_parallel(
    rt, troupe::inits::indices, item_plus_one_mutable, gather,
    {.target = troupe::inbatch_target::processes, .n_workers = 2, .processes = &procs});
  auto work_threads = troupe::inbatch_parallel(
    rt, troupe::inits::indices, [](int_batch&, std::size_t i) { return fixed_work(i); }, gather,
    {.n_workers = 2, .threads = &threads});
  auto work_processes = troupe::inbatch_parallel(
    rt, troupe::inits::indices, item_work, gather,
    {.target = troupe::inbatch_target::processes, .n_workers = 2, .processes = &procs});

  auto t = interleaved(
    {
      {"threads_map",
       [&] { check(threads.map([](int x) { return x + 1; }, trivial.values), trivial, "map"); }},
      {"threads_inbatch", [&] { check(on_threads(trivial), trivial, "inbatch threads"); }},
    },
    trivial_rounds);
  t.merge(interleaved(
    {
      {"processes_map",
       [&] { check(procs.map(plus_one, trivial.values), trivial, "process map"); }},
      {"processes_inbatch", [&] { check(in_processes(trivial), trivial, "inbatch processes"); }},
      {"processes_inbatch_mutable",
       [&] { check(in_processes_mutable(trivial), trivial, "inbatch processes (mutable)"); }},
    },
    process_rounds));
  t.merge(interleaved(
    {
      {"threads_cpu_1", [&] { work_threads.call(cpu, {.n_workers = 1}); }},
      {"threads_cpu_2", [&] { work_threads(cpu); }},
      {"processes_cpu_1", [&] { work_processes.call(cpu, {.n_workers = 1}); }},
      {"processes_cpu_2", [&] { work_processes(cpu); }},
    },
    rounds));

  std::printf("# %zu trivial items (median of %d rounds on threads, %d in processes), %zu items "
              "of ~1 ms (median of %d), 2 workers\n",
              trivial_items, trivial_rounds, process_rounds, cpu_items, rounds);
  for (const auto& [name, seconds] : t)
    std::printf("# %-18s %.3f ms\n", name.c_str(), seconds * 1e3);
  std::printf("inbatch_threads_ratio_to_map %.2f x\n",
              t.at("threads_inbatch") / t.at("threads_map"));
  std::printf("inbatch_processes_ratio_to_map %.2f x\n",
              t.at("processes_inbatch") / t.at("processes_map"));
  std::printf("inbatch_processes_mutable_ratio_to_map %.2f x\n",
              t.at("processes_inbatch_mutable") / t.at("processes_map"));
  std::printf("inbatch_cpu_speedup_2_vs_1 %.2f x\n", t.at("threads_cpu_1") / t.at("threads_cpu_2"));
  std::printf("inbatch_processes_cpu_speedup_2_vs_1 %.2f x\n",
              t.at("processes_cpu_1") / t.at("processes_cpu_2"));
}
