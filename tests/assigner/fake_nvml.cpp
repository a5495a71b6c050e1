// A stand-in for NVIDIA's libnvidia-ml.so: two GPUs, 8 GiB free and 25 % busy, 2 GiB free and
// idle. Loaded by devices_test through TROUPE_NVML_LIBRARY.
extern "C" {

struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
using nvmlDevice_t = void*;

static int fake_devices[2];

int nvmlInit_v2() { return 0; }
int nvmlShutdown() { return 0; }
int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = 2;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  if (index >= 2)
    return 2; // NVML_ERROR_INVALID_ARGUMENT
  *device = &fake_devices[index];
  return 0;
}
int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  const bool first = device == &fake_devices[0];
  memory->total = 16ULL << 30;
  memory->free = first ? 8ULL << 30 : 2ULL << 30;
  memory->used = memory->total - memory->free;
  return 0;
}
int nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* load) {
  load->gpu = device == &fake_devices[0] ? 25 : 0;
  load->memory = 0;
  return 0;
}
}
