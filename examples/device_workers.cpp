// A pool of device-bound workers: each worker process opens one device when it starts and keeps
// it, and every task it runs gets that device first. The devices are this machine's GPUs as
// NVML lists them (troupe::local_devices()); where there is none, the CPU stands in for two
// (cpu:0 and cpu:1).
//
//   ./build/examples/device_workers
#include <troupe/troupe.hpp>

#include <troupe/assigner/devices.hpp>

#include <unistd.h>

#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

/// The devices to bind workers to: the GPUs, or the CPU twice where there is none.
std::vector<std::string> device_names() {
  std::vector<std::string> gpus;
  for (const auto& device : troupe::local_devices())
    if (device.kind == troupe::device_kind::gpu)
      gpus.push_back(device.name);
  return gpus.empty() ? std::vector<std::string>{"cpu:0", "cpu:1"} : gpus;
}

} // namespace

// snippet-begin: context
/// What a worker owns: its device, opened in the worker (a CUDA context, a model loaded onto it
/// would live here), and what it has done with it.
struct bound_device {
  std::string name;
  int pid = 0;
  int batches = 0;
};

// Makes worker `index`'s context, inside that worker: what cannot travel is opened where it is
// used. A worker that dies is replaced, and its replacement opens the device again.
TROUPE_CONTEXT_FACTORY(open_device, [](std::size_t index) {
  const auto names = device_names();
  return bound_device{names[index % names.size()], static_cast<int>(::getpid())};
});

// A task of a context pool takes the worker's context first.
TROUPE_TASK(run_batch, [](bound_device& device, int batch) {
  if (device.pid != ::getpid())
    throw std::logic_error("a device used outside the process that opened it");
  ++device.batches; // stays with the worker, batch after batch
  return "batch " + std::to_string(batch) + " on " + device.name + " in process " +
         std::to_string(device.pid);
});
// snippet-end: context

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv}; // a worker process never gets past this line
  // snippet-begin: pool
  const int workers = static_cast<int>(device_names().size()); // a worker a device
  troupe::ctx_process_pool<bound_device> pool{rt, open_device, {.workers = workers}};
  const auto done = pool.map(run_batch, std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}, 1);
  // snippet-end: pool
  std::map<std::string, int> by_process;
  for (const auto& line : done) {
    std::printf("%s\n", line.c_str());
    ++by_process[line.substr(line.rfind(' ') + 1)];
  }
  std::printf("%d workers, one device each\n", workers);
  return done.size() == 8 && !by_process.empty() ? 0 : 1;
}
