// A model's stages as actors, each on the member that offers the device the assigner chose for
// it: start this program three times,
//
//   TROUPE_RANK=0 TROUPE_WORLD_SIZE=3 build/examples/placed_stages &
//   TROUPE_RANK=1 TROUPE_WORLD_SIZE=3 TROUPE_DEVICES=cpu build/examples/placed_stages &
//   TROUPE_RANK=2 TROUPE_WORLD_SIZE=3 TROUPE_DEVICES=cpu build/examples/placed_stages
//
// (on GPU hosts, give each member its own: TROUPE_DEVICES=cuda:0, ...). Rank 0 asks every member
// to describe its devices, places four stages on them with troupe::assign, starts each stage's
// actor where its device is, and pushes batches through the stages in turn.
#include <troupe/assigner/assigner.hpp>
#include <troupe/assigner/world_devices.hpp>
#include <troupe/troupe.hpp>

#include <unistd.h>

#include <iostream>
#include <numeric>
#include <string>
#include <vector>

/// One stage of a model: a scale and a shift, applied where its device is.
// snippet-begin: stage
struct stage {
  stage(std::string device, double scale) : device(std::move(device)), scale(scale) {}
  std::vector<double> forward(std::vector<double> x) {
    ++batches;
    for (auto& v : x)
      v = v * scale + 1;
    return x;
  }
  std::string where() const { return device + " (pid " + std::to_string(getpid()) + ")"; }
  int seen() const { return batches; }

  std::string device;
  double scale;
  int batches = 0;
};
// Its constructor's parameters, named once (a macro's argument cannot hold a comma).
using stage_args = troupe::constructor<std::string, double>;
TROUPE_ACTOR(stage, stage_args, &stage::forward, &stage::where, &stage::seen);
// snippet-end: stage

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv};
  auto options = troupe::world_options::from_environment();
  options.timeout = std::chrono::seconds{30};
  troupe::world world{rt, options};
  auto group = world.create_rpc_group("model", world.members());
  int status = 0;
  if (world.rank() == 0) {
    constexpr double mib = 1 << 20;
    const std::vector<troupe::module_spec> modules{
      {"embed", 300 * mib}, {"block0", 600 * mib}, {"block1", 600 * mib}, {"head", 200 * mib}};
    const std::vector<troupe::connection> flows{
      {0, 1, 16 * mib}, {1, 2, 16 * mib}, {2, 3, 16 * mib}};
    // snippet-begin: spawn
    const auto devices = troupe::world_devices(group); // "cpu@rank-0", "cuda:0@rank-1", ...
    const auto plan = troupe::assign(modules, devices, flows, {.seed = 1});
    std::vector<troupe::actor<stage>> stages;
    for (std::size_t i = 0; i < modules.size(); ++i) {
      const auto& device = plan.device_name[i];
      stages.push_back(group.spawn<stage>(troupe::on_device{device}, {.name = modules[i].name},
                                          device.substr(0, device.find('@')), 1.0 + i));
      std::cout << modules[i].name << " on " << device << ": "
                << stages.back().call(&stage::where).get() << "\n";
    }
    // snippet-end: spawn
    for (int batch = 0; batch < 3; ++batch) {
      std::vector<double> x(4, batch);
      for (const auto& s : stages)
        x = s.call(&stage::forward, x).get();
      std::cout << "batch " << batch << " -> " << x.front() << "\n";
    }
    for (const auto& s : stages)
      status |= s.call(&stage::seen).get() == 3 ? 0 : 1;
  }
  group.barrier(); // the others serve the stages until rank 0 is done with them
  return status;
}
