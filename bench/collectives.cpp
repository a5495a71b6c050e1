// bench/collectives: troupe's collective groups against the raw engines they run on, gloo and
// MPI, between two ranks on this host, interleaved in one run.
//
//   build/bench/collectives [rounds]        (starts itself again under mpirun -np 2)
//
// Contenders: raw gloo (Debian libgloo, FileStore rendezvous, TCP on 127.0.0.1, gloo::sum), a
// troupe gloo group, raw MPI (MPI_Allreduce and friends on MPI_COMM_WORLD, OpenMPI's shared
// memory transport), a troupe MPI group; troupe's groups with their default shape check, and
// once more without it (check_shapes = false). Each round times a loop of each operation per
// contender in turn, between two barriers, so the slower rank sets the time; the figure is the
// median over rounds. Tensors are float32 of 1 KiB, 1 MiB and 64 MiB. The last lines are
// `name value unit`, read by tooling.
#include "median.hpp"

#include "troupe/actors/network.hpp"
#include "troupe/collectives/collective_group.hpp"
#include "troupe/world/world.hpp"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

enum class operation { all_reduce, broadcast, all_gather };
constexpr const char* operation_names[] = {"allreduce", "broadcast", "allgather"};

struct size_case {
  const char* label;
  std::size_t floats;
  int gloo_iterations; // gloo is slow at 1 KiB (about 1 ms an op); MPI needs more to be timed
  int mpi_iterations;
};
constexpr size_case sizes[] = {
  {"1k", 256, 200, 4000}, {"1m", 1 << 18, 30, 60}, {"64m", 1 << 24, 3, 3}};

/// The buffers every contender uses for one size.
struct buffers {
  std::vector<float> tensor;
  std::vector<std::vector<float>> outputs; // troupe's all_gather
  std::vector<float> gathered; // the raw engines' all_gather
};

struct contender {
  std::string name; // "gloo_raw", "gloo_troupe", ...
  bool mpi = false;
  std::function<void(operation, buffers&)> run;
};

int relaunch_under_mpirun(int argc, char** argv) {
  std::vector<std::string> words{"mpirun",
                                 "--allow-run-as-root",
                                 "--oversubscribe",
                                 "--mca",
                                 "oob_tcp_if_include",
                                 "lo",
                                 "--mca",
                                 "btl_tcp_if_include",
                                 "lo",
                                 "-np",
                                 "2",
                                 "/proc/self/exe"};
  words[words.size() - 1] = std::filesystem::read_symlink("/proc/self/exe").string();
  for (int i = 1; i < argc; ++i)
    words.emplace_back(argv[i]);
  std::vector<char*> args;
  for (auto& word : words)
    args.push_back(word.data());
  args.push_back(nullptr);
  ::execvp("mpirun", args.data());
  std::perror("bench/collectives: cannot run mpirun");
  return 1;
}

/// A folder rank 0 makes and both ranks share, for raw gloo's FileStore.
std::string shared_folder(int rank) {
  char path[64] = "/tmp/troupe-bench-gloo-XXXXXX";
  if (rank == 0 && ::mkdtemp(path) == nullptr)
    std::abort();
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  return path;
}

std::shared_ptr<gloo::rendezvous::Context> raw_gloo_context(int rank, const std::string& folder) {
  auto device = gloo::transport::tcp::CreateDevice(gloo::transport::tcp::attr{"127.0.0.1"});
  gloo::rendezvous::FileStore store{folder};
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, 2);
  context->connectFullMesh(store, device);
  return context;
}

contender raw_gloo(std::shared_ptr<gloo::rendezvous::Context> context) {
  auto tag = std::make_shared<std::uint32_t>(0);
  return {
    "gloo_raw", false, [context, tag](operation op, buffers& b) {
      const auto n = b.tensor.size();
      if (op == operation::all_reduce) {
        gloo::AllreduceOptions options{context};
        options.setOutput(b.tensor.data(), n);
        options.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, std::size_t)>(&gloo::sum<float>));
        options.setTag((*tag)++);
        gloo::allreduce(options);
      } else if (op == operation::broadcast) {
        gloo::BroadcastOptions options{context};
        options.setOutput(b.tensor.data(), n);
        options.setRoot(0);
        options.setTag((*tag)++);
        gloo::broadcast(options);
      } else {
        gloo::AllgatherOptions options{context};
        options.setInput(b.tensor.data(), n);
        options.setOutput(b.gathered.data(), 2 * n);
        options.setTag((*tag)++);
        gloo::allgather(options);
      }
    }};
}

contender raw_mpi() {
  return {"mpi_raw", true, [](operation op, buffers& b) {
            const int n = static_cast<int>(b.tensor.size());
            if (op == operation::all_reduce)
              MPI_Allreduce(MPI_IN_PLACE, b.tensor.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            else if (op == operation::broadcast)
              MPI_Bcast(b.tensor.data(), n, MPI_FLOAT, 0, MPI_COMM_WORLD);
            else
              MPI_Allgather(b.tensor.data(), n, MPI_FLOAT, b.gathered.data(), n, MPI_FLOAT,
                            MPI_COMM_WORLD);
          }};
}

contender troupe_group(std::string name, bool mpi, troupe::collective_group group) {
  auto shared = std::make_shared<troupe::collective_group>(std::move(group));
  return {std::move(name), mpi, [shared](operation op, buffers& b) {
            if (op == operation::all_reduce)
              shared->all_reduce(b.tensor);
            else if (op == operation::broadcast)
              shared->broadcast(b.tensor, 0);
            else
              shared->all_gather(b.outputs, b.tensor);
          }};
}

/// Microseconds per operation over `iterations`, between barriers on both ranks.
double time_loop(const contender& c, operation op, buffers& b, int iterations) {
  c.run(op, b); // warm: buffers registered, pages touched
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = clock_type::now();
  for (int i = 0; i < iterations; ++i)
    c.run(op, b);
  MPI_Barrier(MPI_COMM_WORLD);
  return std::chrono::duration<double, std::micro>(clock_type::now() - start).count() / iterations;
}

using troupe::bench::median;

void report(int rounds, const std::vector<contender>& contenders) {
  // results[size][operation][contender] = per-round microseconds
  std::map<std::string, std::vector<double>> results;
  for (const auto& size : sizes) {
    buffers b{std::vector<float>(size.floats, 1.0f),
              std::vector<std::vector<float>>(2, std::vector<float>(size.floats)),
              std::vector<float>(2 * size.floats)};
    for (int round = 0; round < rounds; ++round)
      for (int op = 0; op < 3; ++op)
        for (const auto& c : contenders) {
          const int iterations = c.mpi ? size.mpi_iterations : size.gloo_iterations;
          const auto key = std::string{operation_names[op]} + "_" + size.label + "_" + c.name;
          results[key].push_back(time_loop(c, static_cast<operation>(op), b, iterations));
        }
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0)
    return;
  std::map<std::string, double> medians;
  for (const auto& [key, samples] : results)
    medians[key] = median(samples);
  std::printf("%-34s %12s\n", "operation_size_contender", "median us");
  for (const auto& [key, us] : medians)
    std::printf("%-34s %12.1f\n", key.c_str(), us);
  const auto ratio = [&](const std::string& op_size, const std::string& engine,
                         const std::string& variant) {
    return medians[op_size + "_" + engine + "_" + variant] /
           medians[op_size + "_" + engine + "_raw"];
  };
  for (const char* s : {"64m", "1m", "1k"})
    for (const char* engine : {"gloo", "mpi"}) {
      const auto key = std::string{"allreduce_"} + s;
      std::printf("%s_%s_ratio_to_raw %.3f x\n", key.c_str(), engine, ratio(key, engine, "troupe"));
      std::printf("%s_%s_unchecked_ratio_to_raw %.3f x\n", key.c_str(), engine,
                  ratio(key, engine, "unchecked"));
    }
  double best = 1e300;
  for (const char* engine : {"gloo", "mpi"})
    best = std::min(best, medians[std::string{"allreduce_64m_"} + engine + "_troupe"]);
  std::printf("allreduce_64m_best_ms %.2f ms\n", best / 1000.0);
}

} // namespace

int main(int argc, char** argv) {
  if (std::getenv("OMPI_COMM_WORLD_RANK") == nullptr)
    return relaunch_under_mpirun(argc, argv);
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int port = rank == 0 ? troupe::detail::free_loopback_port() : 0;
  MPI_Bcast(&port, 1, MPI_INT, 0, MPI_COMM_WORLD);
  ::setenv("TROUPE_ADDRESS", ("127.0.0.1:" + std::to_string(port)).c_str(), 1);
  const auto folder = shared_folder(rank);
  {
    troupe::runtime rt;
    troupe::world world{rt, troupe::world_options::from_environment()};
    using troupe::collective_backend;
    std::vector<contender> contenders;
    contenders.push_back(raw_gloo(raw_gloo_context(rank, folder)));
    contenders.push_back(
      troupe_group("gloo_troupe", false, *troupe::create_collective_group(world, {0, 1})));
    contenders.push_back(
      troupe_group("gloo_unchecked", false,
                   *troupe::create_collective_group(world, {0, 1}, {.check_shapes = false})));
    contenders.push_back(raw_mpi());
    contenders.push_back(troupe_group(
      "mpi_troupe", true,
      *troupe::create_collective_group(world, {0, 1}, {.backend = collective_backend::mpi})));
    contenders.push_back(
      troupe_group("mpi_unchecked", true,
                   *troupe::create_collective_group(
                     world, {0, 1}, {.backend = collective_backend::mpi, .check_shapes = false})));
    report(rounds, contenders);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank == 0)
    std::filesystem::remove_all(folder);
  MPI_Finalize();
  return 0;
}
