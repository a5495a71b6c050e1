#include "troupe/assigner/devices.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace troupe {

namespace {

// The few NVML declarations used, from NVIDIA's nvml.h (stable C ABI).
using nvml_return = int;
using nvml_device = struct nvml_device_opaque*;
struct nvml_memory {
  unsigned long long total, free, used;
};
struct nvml_utilization {
  unsigned int gpu, memory;
};
constexpr nvml_return nvml_success = 0;

double available_memory_bytes() {
  std::ifstream meminfo{"/proc/meminfo"};
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields{line};
    std::string key;
    double kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:")
      return kib * 1024;
  }
  return 0;
}

/// NVML, opened for the lifetime of one local_devices() call.
class nvml_library {
public:
  nvml_library() {
    const char* path = std::getenv("TROUPE_NVML_LIBRARY");
    handle_ = dlopen(path != nullptr ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr)
      return;
    init_ = symbol<nvml_return (*)()>("nvmlInit_v2");
    shutdown_ = symbol<nvml_return (*)()>("nvmlShutdown");
    count_ = symbol<nvml_return (*)(unsigned*)>("nvmlDeviceGetCount_v2");
    by_index_ = symbol<nvml_return (*)(unsigned, nvml_device*)>("nvmlDeviceGetHandleByIndex_v2");
    memory_ = symbol<nvml_return (*)(nvml_device, nvml_memory*)>("nvmlDeviceGetMemoryInfo");
    utilization_ =
      symbol<nvml_return (*)(nvml_device, nvml_utilization*)>("nvmlDeviceGetUtilizationRates");
    usable_ = init_ && shutdown_ && count_ && by_index_ && memory_ && utilization_ &&
              init_() == nvml_success;
  }
  ~nvml_library() {
    if (usable_)
      shutdown_();
    if (handle_ != nullptr)
      dlclose(handle_);
  }
  nvml_library(const nvml_library&) = delete;
  nvml_library& operator=(const nvml_library&) = delete;

  std::vector<device_spec> gpus() const {
    std::vector<device_spec> out;
    unsigned count = 0;
    if (!usable_ || count_(&count) != nvml_success)
      return out;
    for (unsigned i = 0; i < count; ++i) {
      nvml_device device = nullptr;
      nvml_memory memory{};
      nvml_utilization load{};
      if (by_index_(i, &device) != nvml_success || memory_(device, &memory) != nvml_success)
        continue;
      const bool has_load = utilization_(device, &load) == nvml_success;
      out.push_back({"cuda:" + std::to_string(i), device_kind::gpu,
                     static_cast<double>(memory.free), has_load ? 1.0 - load.gpu / 100.0 : 1.0});
    }
    return out;
  }

private:
  template <class F>
  F symbol(const char* name) {
    return reinterpret_cast<F>(dlsym(handle_, name));
  }

  void* handle_ = nullptr;
  bool usable_ = false;
  nvml_return (*init_)() = nullptr;
  nvml_return (*shutdown_)() = nullptr;
  nvml_return (*count_)(unsigned*) = nullptr;
  nvml_return (*by_index_)(unsigned, nvml_device*) = nullptr;
  nvml_return (*memory_)(nvml_device, nvml_memory*) = nullptr;
  nvml_return (*utilization_)(nvml_device, nvml_utilization*) = nullptr;
};

} // namespace

std::vector<device_spec> local_devices() {
  auto devices = nvml_library{}.gpus();
  devices.push_back({"cpu", device_kind::cpu, available_memory_bytes(), std::nullopt});
  return devices;
}

} // namespace troupe
