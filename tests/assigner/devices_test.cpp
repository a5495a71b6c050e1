#include "troupe/assigner/devices.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace {

class local_devices_test : public ::testing::Test {
protected:
  void TearDown() override { unsetenv("TROUPE_NVML_LIBRARY"); }
};

TEST_F(local_devices_test, lists_the_cpu_with_the_memory_available_now) {
  setenv("TROUPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  const auto devices = troupe::local_devices();
  ASSERT_EQ(devices.size(), 1u) << "no NVML, no GPUs";
  EXPECT_EQ(devices[0].name, "cpu");
  EXPECT_EQ(devices[0].kind, troupe::device_kind::cpu);
  EXPECT_GT(devices[0].memory_capacity_bytes, 64.0 * (1 << 20));
  EXPECT_FALSE(devices[0].compute_power.has_value()) << "cpu_weight applies";
}

TEST_F(local_devices_test, lists_gpus_from_nvml_loaded_at_run_time) {
  setenv("TROUPE_NVML_LIBRARY", FAKE_NVML_PATH, 1);
  const auto devices = troupe::local_devices();
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[0].name, "cuda:0");
  EXPECT_EQ(devices[0].kind, troupe::device_kind::gpu);
  EXPECT_EQ(devices[0].memory_capacity_bytes, 8.0 * (1ULL << 30));
  EXPECT_DOUBLE_EQ(*devices[0].compute_power, 0.75);
  EXPECT_EQ(devices[1].name, "cuda:1");
  EXPECT_EQ(devices[1].memory_capacity_bytes, 2.0 * (1ULL << 30));
  EXPECT_DOUBLE_EQ(*devices[1].compute_power, 1.0);
  EXPECT_EQ(devices[2].name, "cpu");
}

} // namespace
