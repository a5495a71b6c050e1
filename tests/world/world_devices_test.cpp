// Actors placed by device: each member offers devices (world_options::devices), the group names
// them "device@member", world_devices() describes them for the assigner, and
// rpc_group::spawn(troupe::on_device{...}) puts an actor on the member whose device the
// assignment chose. Members see two GPUs through a stand-in NVML (tests/assigner/fake_nvml.cpp):
// cuda:0 with 8 GiB free and 25 % busy, cuda:1 with 2 GiB free and idle.
#include "world_test_support.hpp"

#include "troupe/actors/actor_type.hpp"
#include "troupe/assigner/assigner.hpp"
#include "troupe/assigner/world_devices.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace troupe::testing {

/// A module's stage, made on the device the assignment chose for it.
struct placed_stage {
  explicit placed_stage(std::string device) : device(std::move(device)) {}
  std::string where() const { return device + " in " + std::to_string(getpid()); }
  std::string device;
};
TROUPE_ACTOR(placed_stage, std::string, &placed_stage::where);

namespace {

TROUPE_TASK(pid_here, [] { return static_cast<int>(getpid()); });

/// The environment of member `rank`, offering `devices` (comma-separated), NVML's stand-in its
/// GPUs.
std::map<std::string, std::string> member_with_devices(int rank, int port, std::string devices) {
  auto environment = member_environment(rank, 3, port);
  environment["TROUPE_DEVICES"] = std::move(devices);
  environment["TROUPE_NVML_LIBRARY"] = FAKE_NVML_PATH;
  return environment;
}

/// Ranks 0 and 2: the group of everyone, then (rank 2) the group of the GPUs' members.
TROUPE_ROLE(device_member) {
  return as_member([](troupe::world& world) {
    auto all = world.create_rpc_group("all", everyone);
    if (world.rank() == 2) {
      auto gpus = world.create_rpc_group("gpus", {"1", "2"});
      wait_until_gone(gpus, "1");
    } else {
      wait_until_gone(all, "1");
    }
  });
}

class world_devices_test : public ::testing::Test {
protected:
  int port = free_port();
  troupe::runtime rt;
  // Rank 0 offers a TPU its host does not have.
  member_process rank0{"device_member", member_with_devices(0, port, "cpu,tpu:0")};
  member_process rank2{"device_member", member_with_devices(2, port, "cuda:0")};
  std::optional<troupe::world> world;
  std::optional<troupe::rpc_group> all, gpus;

  void SetUp() override {
    setenv("TROUPE_NVML_LIBRARY", FAKE_NVML_PATH, 1);
    auto options = member_options(1, 3, port);
    options.devices = {"cuda:1", "cpu"};
    world.emplace(rt, options);
    all.emplace(world->create_rpc_group("all", everyone));
    gpus.emplace(world->create_rpc_group("gpus", {"1", "2"}));
  }
  void TearDown() override {
    all.reset();
    gpus.reset();
    world.reset();
    unsetenv("TROUPE_NVML_LIBRARY");
    EXPECT_EQ(rank0.exit_code(30s), 0);
    EXPECT_EQ(rank2.exit_code(30s), 0);
  }
};

TEST_F(world_devices_test, EveryMemberLearnsEveryMembersDevicesWhenTheWorldForms) {
  EXPECT_EQ(all->devices(),
            (std::vector<std::string>{"cpu@0", "cpu@1", "cuda:0@2", "cuda:1@1", "tpu:0@0"}));
  EXPECT_EQ(gpus->devices(), (std::vector<std::string>{"cpu@1", "cuda:0@2", "cuda:1@1"}));
}

TEST_F(world_devices_test, EachMemberDescribesItsDevicesAsItsHostSeesThem) {
  const auto devices = troupe::world_devices(*gpus);
  ASSERT_EQ(devices.size(), 3U);
  EXPECT_EQ(devices[0].name, "cpu@1");
  EXPECT_EQ(devices[0].kind, troupe::device_kind::cpu);
  EXPECT_GT(devices[0].memory_capacity_bytes, 0);
  EXPECT_EQ(devices[1].name, "cuda:0@2");
  EXPECT_EQ(devices[1].kind, troupe::device_kind::gpu);
  EXPECT_EQ(devices[1].memory_capacity_bytes, 8.0 * (1ULL << 30));
  EXPECT_EQ(devices[1].compute_power, 0.75);
  EXPECT_EQ(devices[2].name, "cuda:1@1");
  EXPECT_EQ(devices[2].memory_capacity_bytes, 2.0 * (1ULL << 30));
  EXPECT_EQ(devices[2].compute_power, 1.0);
}

TEST_F(world_devices_test, AMemberOfferingADeviceItsHostLacksIsNamed) {
  try {
    (void)troupe::world_devices(*all);
    FAIL() << "expected invalid_argument";
  } catch (const troupe::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("member '0'"), std::string::npos) << what;
    EXPECT_NE(what.find("'tpu:0'"), std::string::npos) << what;
  }
}

// What the assigner decides, the placement follows: each module's actor runs on the member that
// offers the device it was given, whichever that is.
TEST_F(world_devices_test, EachModulesActorRunsOnTheMemberOfferingItsAssignedDevice) {
  const std::vector<troupe::module_spec> modules{
    {"embed", 1e9}, {"encoder", 1.5e9}, {"decoder", 0.2e9}, {"head", 0.1e9}};
  const auto devices = troupe::world_devices(*gpus);
  const auto plan = troupe::assign(modules, devices, {{0, 1, 4e6}, {1, 2, 4e6}, {2, 3, 1e6}},
                                   {.seed = 7, .search_rounds = 200});
  ASSERT_TRUE(plan.feasible);
  const std::map<std::string, int> pid_of{{"1", getpid()}, {"2", rank2.pid()}};
  std::set<std::string> used;
  for (std::size_t i = 0; i < modules.size(); ++i) {
    const auto& device = plan.device_name[i];
    auto stage = gpus->spawn<placed_stage>(troupe::on_device{device}, {.name = modules[i].name},
                                           device.substr(0, device.find('@')));
    const auto member = device.substr(device.find('@') + 1);
    EXPECT_EQ(stage.call(&placed_stage::where).get(10s),
              device.substr(0, device.find('@')) + " in " + std::to_string(pid_of.at(member)))
      << modules[i].name << " on " << device;
    EXPECT_EQ(gpus->rpc_sync(member, pid_here), pid_of.at(member));
    used.insert(member);
  }
  EXPECT_EQ(used.size(), 2U) << "the modules do not fit one member's devices";
}

TEST_F(world_devices_test, ADeviceNoMemberOffersIsRefusedNamingWhatIsOffered) {
  const std::vector<std::pair<std::string, std::string>> cases{
    {"cuda:7@2", "offers 'cuda:7@2'"}, // a device its member does not offer
    {"cuda:1@2", "offers 'cuda:1@2'"}, // offered by another member
    {"cpu@0", "offers 'cpu@0'"}, // a member outside the group
    {"cuda:0", "write \"device@member\""}, // no member named
  };
  for (const auto& [device, expected] : cases) {
    try {
      (void)gpus->spawn<placed_stage>(troupe::on_device{device}, {.name = "nowhere"}, device);
      ADD_FAILURE() << device << ": expected invalid_argument";
    } catch (const troupe::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(expected), std::string::npos) << what;
      EXPECT_NE(what.find("cpu@1, cuda:0@2, cuda:1@1"), std::string::npos) << what;
    }
  }
}

TEST(world_device_options, DevicesAreNamedOnceWithoutSeparatorsAndComeFromTheEnvironment) {
  troupe::runtime rt;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
    {{"cuda:0@x"}, "'cuda:0@x' is no device name"},
    {{"cpu", ""}, "'' is no device name"},
    {{"cpu", "cpu"}, "lists 'cpu' twice"},
    {std::vector<std::string>(300, "x"), "256 devices at most"},
  };
  for (const auto& [devices, expected] : cases) {
    auto options = member_options(0, 1, free_port());
    options.devices = devices;
    try {
      troupe::world w{rt, options};
      ADD_FAILURE() << expected << ": the world formed";
    } catch (const troupe::invalid_argument& e) {
      EXPECT_NE(std::string{e.what()}.find(expected), std::string::npos) << e.what();
    }
  }
  auto options = member_options(0, 1, free_port());
  troupe::world alone{rt, options};
  auto group = alone.create_rpc_group("alone", {"0"});
  EXPECT_EQ(group.devices(), std::vector<std::string>{"cpu@0"}) << "no list: the CPU";

  setenv("TROUPE_RANK", "0", 1);
  setenv("TROUPE_WORLD_SIZE", "1", 1);
  setenv("TROUPE_DEVICES", "cuda:0,cuda:1", 1);
  const auto from_environment = troupe::world_options::from_environment();
  unsetenv("TROUPE_RANK");
  unsetenv("TROUPE_WORLD_SIZE");
  unsetenv("TROUPE_DEVICES");
  EXPECT_EQ(from_environment.devices, (std::vector<std::string>{"cuda:0", "cuda:1"}));
}

} // namespace
} // namespace troupe::testing
