// Pools across hosts: a process pool on host 0 whose nodes join from hosts 1 and 2 over TLS,
// with inbatch_parallel's processes target and staged compute on it, and a node that joins again
// after its host's link came back; and the three parameter servers, hosted on host 0 and used
// from the others.
#include "host_roles.hpp"

#include "troupe/inbatch/inbatch_parallel.hpp"
#include "troupe/pools/process_pool.hpp"
#include "troupe/servers/ordered_server.hpp"
#include "troupe/servers/push_pull_grad_server.hpp"
#include "troupe/servers/push_pull_model_server.hpp"
#include "troupe/staged/parallel_compute.hpp"

#include <sys/stat.h>

#include <set>
#include <thread>

namespace {

/// Which host (network namespace) runs this: its namespace's inode.
double net_namespace() {
  struct stat about {};
  ::stat("/proc/self/ns/net", &about);
  return static_cast<double>(about.st_ino);
}

} // namespace

namespace troupe::hosts {

/// A batch of rows for inbatch_parallel: outside the anonymous namespace, as a task's parameter
/// type is part of the task's registration, which has external linkage.
struct rows {
  std::vector<int> values{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  std::size_t size() const { return values.size(); }
  template <class Archive>
  void serialize(Archive& ar) {
    ar(values);
  }
};

} // namespace troupe::hosts

using troupe::hosts::rows;

TROUPE_TASK(host_of_item, [](int) {
  std::this_thread::sleep_for(std::chrono::milliseconds{20}); // so every slot gets some
  return net_namespace();
});
TROUPE_TASK(host_row_squared, [](rows& b, std::size_t i) {
  std::this_thread::sleep_for(std::chrono::milliseconds{20});
  return b.values[i] * b.values[i];
});

namespace troupe::hosts {
namespace {

const auto host_schema = troupe::staged::register_schema(
  troupe::staged::schema{"hosts_staged"}
    .field("value")
    .property({.name = "twice",
               .field_deps = {"value"},
               .compute =
                 [](const troupe::staged::record& r) {
                   std::this_thread::sleep_for(std::chrono::milliseconds{20});
                   const auto& v = r.get("value");
                   return troupe::staged::tensor{2.0 * v.values(), v.dims()};
                 }})
    .property({.name = "host", .compute = [](const troupe::staged::record&) {
                 return troupe::staged::tensor::scalar(net_namespace());
               }}));

/// A pool of one local worker that takes nodes on TROUPE_TEST_PORT (TLS from the environment).
troupe::process_pool_options taking_nodes() {
  return {.workers = 1,
          .remote_secret = std::getenv("TROUPE_SECRET"),
          .tls = troupe::tls_options::from_environment(),
          .listen_address = "0.0.0.0",
          .listen_port = static_cast<std::uint16_t>(std::stoi(std::getenv("TROUPE_TEST_PORT")))};
}

/// Host 0: a pool of one local worker taking TLS nodes on TROUPE_TEST_PORT; once both nodes
/// joined, a map, an inbatch_parallel action and a staged compute run on it, each reaching
/// more than this host.
TROUPE_HOST_ROLE(pool_with_nodes) {
  troupe::process_pool pool{rt, taking_nodes()};
  mark("pool_listens");
  const auto until = std::chrono::steady_clock::now() + 60s;
  while (pool.size() < 3 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(20ms);
  require(pool.size() == 3, "both nodes joined (slots: " + std::to_string(pool.size()) + ")");

  std::vector<int> items(30);
  const auto hosts = pool.map(host_of_item, items);
  require(std::set<double>(hosts.begin(), hosts.end()).size() == 3, "the map ran on three hosts");

  auto action =
    troupe::inbatch_parallel(rt, troupe::inits::indices, host_row_squared,
                             [](rows&, troupe::outcomes<int>& out) { return out; },
                             {.target = troupe::inbatch_target::processes, .processes = &pool});
  rows batch;
  const auto out = action(batch);
  for (std::size_t i = 0; i < out.size(); ++i)
    require(out[i].value() == static_cast<int>(i * i),
            "inbatch_parallel's item " + std::to_string(i));

  using namespace troupe::staged;
  const xt::xarray<double> values = xt::arange<double>(12.0);
  record r{host_schema, {{"value", tensor{values, {troupe::staged::batch("example", 12)}}}}};
  parallel_compute(r, {"twice", "host"}, {}, pool);
  require(xt::allclose(r.get("twice").values(), 2.0 * xt::arange<double>(12.0)),
          "staged's slices from other hosts stacked back");
  const auto& where = r.get("host").values();
  require(std::set<double>(where.begin(), where.end()).size() > 1,
          "staged's slices ran beyond this host");
  mark("pool_done");
}

/// Waits up to `limit` for `pool` to have `slots` slots; whether it came to.
bool slots_become(troupe::process_pool& pool, std::size_t slots, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (pool.size() != slots && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(20ms);
  return pool.size() == slots;
}

/// How many hosts a map of 30 items ran on.
std::size_t hosts_of_a_map(troupe::process_pool& pool) {
  const auto hosts = pool.map(host_of_item, std::vector<int>(30));
  return std::set<double>(hosts.begin(), hosts.end()).size();
}

/// Host 0: a pool whose node on host 2 is lost when the test cuts its link ("nodes_in"), and
/// joins again once the link is back and the node is started again (as a supervisor would):
/// a map then runs on all three hosts again.
TROUPE_HOST_ROLE(pool_node_returns) {
  troupe::process_pool pool{rt, taking_nodes()};
  mark("pool_listens");
  require(slots_become(pool, 3, 60s), "both nodes joined");
  require(hosts_of_a_map(pool) == 3, "the map ran on three hosts");
  mark("nodes_in");
  require(slots_become(pool, 2, 30s), "the cut-off node was lost");
  require(hosts_of_a_map(pool) == 2, "the map runs on the two hosts left");
  mark("node_lost");
  require(slots_become(pool, 3, 60s), "the node joined again");
  require(hosts_of_a_map(pool) == 3, "the map runs on three hosts again");
}

troupe::grad_server_options machin_options() {
  return {.secondaries = {"0"}, .method = troupe::reduce_method::sum, .reduce_batch_size = 2};
}

/// machin's chain of three scalar layers, and the step p -= grad.
troupe::versioned_model chain() {
  return {{{"l0", xt::xarray<float>{1.0f}},
           {"l1", xt::xarray<float>{2.0f}},
           {"l2", xt::xarray<float>{3.0f}}}};
}
void minus_gradient(troupe::state_dict& p, const troupe::state_dict& g) {
  for (auto& [key, tensor] : p)
    tensor -= g.at(key);
}

/// Rank 0 of the world, on host 0: the ordered server, the model server and the gradient
/// server live here; the members on hosts 1 and 2 push to them.
TROUPE_HOST_ROLE(servers) {
  troupe::world world{rt, member_options()};
  auto group = world.create_rpc_group("servers", world.members());
  std::optional<troupe::ordered_server_host> store;
  std::optional<troupe::push_pull_model_server_host> models;
  std::optional<troupe::push_pull_grad_server_host> grads;
  if (world.rank() == 0) {
    store.emplace(group, "store");
    models.emplace(group, "models");
    grads.emplace(group, "grads", machin_options());
    grads->manage_model(chain(), minus_gradient);
    grads->start();
  }
  group.barrier(); // hosted
  troupe::ordered_server table{group, "store"};
  troupe::push_pull_model_server server{group, "models", "shared"};
  if (world.rank() == 0) {
    troupe::versioned_model first{{{"w", xt::xarray<float>{0.0f}}}};
    require(server.push(first), "the first model");
  }
  group.barrier(); // the shared model exists
  if (world.rank() != 0) {
    const auto key = "from_" + world.name();
    require(table.push(key, world.name(), 1), "a push to the ordered server");
    require(table.pull<std::string>(key)->first == world.name(), "and its pull");
    troupe::push_pull_grad_server gradients{group, "grads", machin_options()};
    auto model_seen = chain();
    for (int i = 0; i < 2; ++i)
      gradients.push(model_seen, {{"l0", xt::xarray<float>{6.0f}},
                                  {"l1", xt::xarray<float>{3.0f}},
                                  {"l2", xt::xarray<float>{2.0f}}});
    troupe::versioned_model model;
    server.pull(model);
    for (int i = 0; i < 20; ++i) {
      model.state["w"] += 1.0f;
      while (!server.push(model)) // another host was first: model holds the newest now
        model.state["w"] += 1.0f;
    }
  }
  group.barrier(); // pushed
  if (grads) { // machin's two clients, two pushes each: one reduction of all four, summed
    for (int i = 0; i < 2000 && grads->model().base() < 1; ++i)
      std::this_thread::sleep_for(5ms);
    require(grads->model().state.at("l0")(0) == -23.0f, "the gradients of both hosts, summed");
  }
  troupe::versioned_model last;
  require(server.pull(last) && last.state["w"](0) == 40.0f && last.version == 41,
          "every increment from both hosts is in the model");
  group.barrier(); // done
}

} // namespace
} // namespace troupe::hosts
