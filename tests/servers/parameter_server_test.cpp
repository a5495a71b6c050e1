// Parameter servers: machin's test_ordered_server and test_param_server, locally and across
// processes (this test is member "0" and starts the others), and what troupe does better.
#include "../map_tensor_store.hpp"
#include "../world/world_test_support.hpp"

#include "troupe/servers/push_pull_grad_server.hpp"
#include "troupe/servers/push_pull_model_server.hpp"

#include <csignal>
#include <cstdlib>

namespace troupe::testing {
namespace {

using troupe::detail::versioned_store;

const std::vector<std::string> two{"0", "1"};
const std::vector<std::string> three{"0", "1", "2"};

xt::xarray<float> values(std::initializer_list<float> v) {
  xt::xarray<float> tensor = xt::xarray<float>::from_shape({v.size()});
  std::copy(v.begin(), v.end(), tensor.begin());
  return tensor;
}

/// machin's test__push_pull_service table, through any push and pull.
template <class Push, class Pull>
void machin_table(Push push, Pull pull) {
  EXPECT_TRUE(push("a", "value", 1, std::nullopt));
  EXPECT_FALSE(push("a", "value1", 2, 0));
  EXPECT_TRUE(push("a", "value2", 2, 1));
  EXPECT_TRUE(push("a", "value3", -1, 2));
  EXPECT_EQ(pull("a", std::nullopt),
            (std::optional<std::pair<std::string, std::int64_t>>{{"value3", -1}}));
  EXPECT_EQ(pull("a", 2), (std::optional<std::pair<std::string, std::int64_t>>{{"value2", 2}}));
  EXPECT_EQ(pull("a", 1), std::nullopt) << "version_depth 1 keeps two versions";
  EXPECT_EQ(pull("b", std::nullopt), std::nullopt);
}

void table_through(troupe::ordered_server& store) {
  machin_table([&](const std::string& k, std::string v, std::int64_t version,
                   std::optional<std::int64_t> prev) { return store.push(k, v, version, prev); },
               [&](const std::string& k, std::optional<std::int64_t> version) {
                 return store.pull<std::string>(k, version);
               });
}

TEST(ordered_server, machin_table_on_the_store) {
  versioned_store store{1};
  machin_table(
    [&](const std::string& k, std::string v, std::int64_t version,
        std::optional<std::int64_t> prev) {
      return store.push(k, troupe::detail::blob{troupe::serialize(v)}, version, prev);
    },
    [&](const std::string& k, std::optional<std::int64_t> version)
      -> std::optional<std::pair<std::string, std::int64_t>> {
      auto found = store.pull(k, version);
      if (!found)
        return std::nullopt;
      return std::pair{troupe::deserialize<std::string>(found->first.bytes()), found->second};
    });
}

TEST(ordered_server, machin_table_locally_and_typed_values) {
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 1, free_port())};
  auto group = world.create_rpc_group("servers", {"0"});
  troupe::ordered_server_host host{group, "store"};
  troupe::ordered_server store{group, "store"};
  table_through(store);
  EXPECT_TRUE(store.push("numbers", std::vector<int>{1, 2}, 0));
  EXPECT_EQ(store.pull<std::vector<int>>("numbers")->first, (std::vector<int>{1, 2}));
  EXPECT_THROW(store.pull<std::string>("numbers"), troupe::serialization_error);
  EXPECT_THROW((troupe::ordered_server_host{group, "store"}), troupe::key_error);
  EXPECT_THROW((troupe::ordered_server_host{group, "deep", -1}), troupe::invalid_argument);
}

// A stored value crosses to a member of the same host through shared memory, as tensors do:
// with a tensor store active, a large blob is kept there and its encoding holds a handle.
TEST(ordered_server, a_large_blob_travels_by_handle_through_a_tensor_store) {
  using troupe::detail::blob;
  using troupe::detail::tensor_store_scope;
  const blob value{std::vector<std::byte>(1 << 20, std::byte{7})};
  map_store store;
  const auto encoded = [&] {
    tensor_store_scope scope{store};
    return troupe::serialize(value);
  }();
  EXPECT_LT(encoded.size(), 64u) << "the blob's bytes stayed out of the message";
  ASSERT_EQ(store.kept.size(), 1u);
  {
    tensor_store_scope scope{store};
    EXPECT_EQ(troupe::deserialize<blob>(encoded), value);
  }
  EXPECT_THROW((void)troupe::deserialize<blob>(encoded), troupe::serialization_error)
    << "no store to fetch it from";
  store.kept.begin()->second.resize(10); // the store keeps fewer bytes than the blob claims
  tensor_store_scope scope{store};
  EXPECT_THROW((void)troupe::deserialize<blob>(encoded), troupe::serialization_error);
  EXPECT_EQ(
    troupe::deserialize<blob>(troupe::serialize(blob{std::vector<std::byte>(8)})).bytes().size(),
    8u)
    << "a small blob stays inline";
}

TEST(ordered_server, depth_zero_keeps_only_the_newest) {
  versioned_store store{0};
  EXPECT_TRUE(store.push("k", troupe::detail::blob{troupe::serialize(1)}, 1, std::nullopt));
  EXPECT_TRUE(store.push("k", troupe::detail::blob{troupe::serialize(2)}, 2, 1));
  EXPECT_EQ(store.pull("k", 1), std::nullopt);
  EXPECT_EQ(store.pull("k", std::nullopt)->second, 2);
}

// --- across processes ---------------------------------------------------------------------

/// Member "1": hosts the servers until member "0" says it is done (a barrier).
TROUPE_ROLE(server_host) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("servers", world.members());
    troupe::ordered_server_host store{group, "store"};
    troupe::push_pull_model_server_host models{group, "models"};
    for (int meeting = 0; meeting < 4; ++meeting) // hosted; shared model; pushed; done
      group.barrier();
  });
}

/// Member "2": pushes 20 increments to the model server, concurrently with member "0".
void push_increments(troupe::push_pull_model_server& server, int count,
                     std::vector<std::int64_t>& versions) {
  troupe::versioned_model model;
  server.pull(model);
  for (int i = 0; i < count; ++i) {
    model.state["w"] += 1.0f;
    while (!server.push(model)) // someone else was first: model holds the newest now
      model.state["w"] += 1.0f;
    versions.push_back(model.base());
  }
}

bool strictly_increasing(const std::vector<std::int64_t>& v) {
  return std::adjacent_find(v.begin(), v.end(), std::greater_equal<>{}) == v.end();
}

TROUPE_ROLE(model_pusher) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("servers", world.members());
    group.barrier();
    troupe::push_pull_model_server server{group, "models", "shared"};
    group.barrier(); // the shared model exists
    std::vector<std::int64_t> versions;
    push_increments(server, 20, versions);
    require(strictly_increasing(versions), "member 2's versions increase");
    group.barrier(); // pushed
    group.barrier(); // done
  });
}

TEST(parameter_servers, machin_tests_across_processes) {
  const int port = free_port();
  std::vector<member_process> members;
  members.emplace_back("server_host", member_environment(1, 3, port));
  members.emplace_back("model_pusher", member_environment(2, 3, port));
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 3, port)};
  auto group = world.create_rpc_group("servers", three);
  group.barrier();

  troupe::ordered_server store{group, "store"}; // hosted by "1"
  table_through(store);

  // test_push_pull: 10 pushes of weights growing by 1, then a fresh model pulls (11, 12, 13).
  troupe::push_pull_model_server server{group, "models"};
  troupe::versioned_model model{{{"w", values({1, 2, 3})}}};
  for (int i = 0; i < 10; ++i) {
    model.state["w"] += 1.0f;
    ASSERT_TRUE(server.push(model));
  }
  troupe::versioned_model fresh;
  ASSERT_TRUE(server.pull(fresh));
  EXPECT_EQ(fresh.state["w"], values({11, 12, 13}));
  EXPECT_EQ(fresh.version, 10);
  troupe::versioned_model never;
  EXPECT_FALSE(troupe::push_pull_model_server(group, "models", "unknown").pull(never));

  // Two processes push 20 increments each to one model: none is lost.
  troupe::push_pull_model_server shared{group, "models", "shared"};
  troupe::versioned_model start{{{"w", values({0})}}};
  ASSERT_TRUE(shared.push(start));
  group.barrier();
  std::vector<std::int64_t> versions;
  push_increments(shared, 20, versions);
  EXPECT_TRUE(strictly_increasing(versions));
  group.barrier(); // pushed
  troupe::versioned_model last;
  ASSERT_TRUE(shared.pull(last));
  EXPECT_EQ(last.state["w"](0), 40.0f) << "every increment of both pushers is there";
  EXPECT_EQ(last.version, 41);
  group.barrier(); // done
  expect_clean_exits(members);
}

// --- the gradient server ------------------------------------------------------------------

/// machin's chain of three scalar layers with weights (1, 2, 3), and the step p -= grad.
troupe::versioned_model chain() {
  return {{{"l0", values({1})}, {"l1", values({2})}, {"l2", values({3})}}};
}
troupe::state_dict chain_gradients() {
  return {{"l0", values({6})}, {"l1", values({3})}, {"l2", values({2})}};
}
void minus_gradient(troupe::state_dict& p, const troupe::state_dict& g) {
  for (auto& [key, tensor] : p)
    tensor -= g.at(key);
}

troupe::grad_server_options machin_options(troupe::reduce_method method) {
  return {.secondaries = {"0"}, .method = method, .reduce_batch_size = 2};
}

troupe::reduce_method method_from_environment() {
  return std::string{std::getenv("TEST_REDUCE_METHOD")} == "mean" ? troupe::reduce_method::mean
                                                                  : troupe::reduce_method::sum;
}

/// Members "1" and "2": each pushes the gradients twice.
TROUPE_ROLE(grad_client) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("grads", world.members());
    group.barrier(); // the server is up
    troupe::push_pull_grad_server server{group, "grads", machin_options(method_from_environment())};
    troupe::versioned_model model = chain();
    for (int i = 0; i < 2; ++i)
      server.push(model, chain_gradients());
    group.barrier();
  });
}

/// Waits (bounded) until `host`'s model reaches `version`.
void await_version(const troupe::push_pull_grad_server_host& host, std::int64_t version) {
  for (int i = 0; i < 2000 && host.model().base() < version; ++i)
    std::this_thread::sleep_for(5ms);
}

class grad_server_machin : public ::testing::TestWithParam<troupe::reduce_method> {};

TEST_P(grad_server_machin, two_clients_two_pushes_one_secondary_batch_two) {
  const bool mean = GetParam() == troupe::reduce_method::mean;
  const int port = free_port();
  std::vector<member_process> members;
  for (int rank : {1, 2}) {
    auto environment = member_environment(rank, 3, port);
    environment["TEST_REDUCE_METHOD"] = mean ? "mean" : "sum";
    members.emplace_back("grad_client", environment);
  }
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 3, port)};
  auto group = world.create_rpc_group("grads", three);
  troupe::push_pull_grad_server_host host{group, "grads", machin_options(GetParam())};
  host.manage_model(chain(), minus_gradient);
  host.start();
  group.barrier();
  await_version(host, 1);
  const auto model = host.model();
  EXPECT_EQ(model.version, 1);
  if (mean)
    EXPECT_EQ(model.state.at("l0")(0), -5.0f);
  else
    EXPECT_EQ(model.state.at("l0")(0), -23.0f);
  EXPECT_EQ(model.state.at("l1")(0), mean ? -1.0f : -10.0f);
  EXPECT_EQ(model.state.at("l2")(0), mean ? 1.0f : -5.0f);
  group.barrier();
  host.watch();
  expect_clean_exits(members);
}

INSTANTIATE_TEST_SUITE_P(methods, grad_server_machin,
                         ::testing::Values(troupe::reduce_method::mean, troupe::reduce_method::sum),
                         [](const auto& info) {
                           return info.param == troupe::reduce_method::mean ? "mean" : "sum";
                         });

/// A world of one, with a gradient server whose primary and only secondary is "0".
class grad_server_alone : public ::testing::Test {
protected:
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 1, free_port())};
  troupe::rpc_group group = world.create_rpc_group("grads", {"0"});
};

TEST_F(grad_server_alone, leftovers_are_reduced_after_flush_after) {
  auto options = machin_options(troupe::reduce_method::sum);
  options.reduce_batch_size = 4;
  options.flush_after = 50ms;
  troupe::push_pull_grad_server_host host{group, "grads", options};
  host.manage_model(chain(), minus_gradient);
  host.start();
  troupe::push_pull_grad_server server{group, "grads", options};
  troupe::versioned_model model = chain();
  server.push(model, chain_gradients()); // one, where a batch is four
  await_version(host, 1);
  EXPECT_EQ(host.model().version, 1);
  EXPECT_EQ(host.model().state.at("l0")(0), -5.0f);
  EXPECT_TRUE(server.pull(model));
  EXPECT_EQ(model.version, 1);
}

TEST_F(grad_server_alone, without_flush_after_leftovers_wait_as_in_machin) {
  auto options = machin_options(troupe::reduce_method::sum);
  options.reduce_batch_size = 4;
  troupe::push_pull_grad_server_host host{group, "grads", options};
  host.manage_model(chain(), minus_gradient);
  host.start();
  troupe::push_pull_grad_server server{group, "grads", options};
  troupe::versioned_model model = chain();
  for (int i = 0; i < 3; ++i)
    server.push(model, chain_gradients());
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(host.model().version, 0);
}

// machin's rule kept: two pushes with a batch of 2 wait for two more (2 x 2 per step); after a
// second the server says so once, naming flush_after.
TEST_F(grad_server_alone, pushes_waiting_for_a_batch_are_logged_once) {
  auto options = machin_options(troupe::reduce_method::sum);
  options.reduce_batch_size = 2;
  troupe::push_pull_grad_server_host host{group, "grads", options};
  host.manage_model(chain(), minus_gradient);
  ::testing::internal::CaptureStderr();
  host.start();
  troupe::push_pull_grad_server server{group, "grads", options};
  troupe::versioned_model model = chain();
  server.push(model, chain_gradients());
  server.push(model, chain_gradients()); // one secondary batch: the primary waits for another
  std::this_thread::sleep_for(2500ms);
  host.stop();
  const auto said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(host.model().version, 0);
  EXPECT_NE(said.find("every 4 pushes"), std::string::npos) << said;
  EXPECT_NE(said.find("flush_after"), std::string::npos) << said;
  EXPECT_EQ(said.find("flush_after"), said.rfind("flush_after")) << "once: " << said;
}

TEST_F(grad_server_alone, stop_returns_with_work_queued_and_start_goes_on) {
  auto options = machin_options(troupe::reduce_method::sum);
  troupe::push_pull_grad_server_host host{group, "grads", options};
  host.manage_model(chain(), minus_gradient);
  troupe::push_pull_grad_server server{group, "grads", options};
  troupe::versioned_model model = chain();
  host.start();
  host.stop(); // nothing queued: returns
  for (int i = 0; i < 4; ++i)
    server.push(model, chain_gradients()); // queued, not reduced: stopped
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(host.model().version, 0);
  host.start();
  await_version(host, 1);
  EXPECT_EQ(host.model().version, 1) << "the queued gradients were kept for the restart";
  host.stop();
}

TEST_F(grad_server_alone, a_full_queue_drops_its_oldest_gradients_as_machin_does) {
  auto options = machin_options(troupe::reduce_method::sum);
  options.max_queue_size = 3;
  troupe::push_pull_grad_server_host host{group, "grads", options};
  host.manage_model(chain(), minus_gradient);
  troupe::push_pull_grad_server server{group, "grads", options};
  troupe::versioned_model model = chain();
  const auto all = [](float v) {
    return troupe::state_dict{{"l0", values({v})}, {"l1", values({v})}, {"l2", values({v})}};
  };
  for (float v : {1.0f, 2.0f, 3.0f, 4.0f, 5.0f}) // stopped: queued; 1 and 2 are dropped
    server.push(model, all(v));
  EXPECT_EQ(host.queued(), 3u);
  host.start(); // (3 + 4) goes to the primary; 5 waits for a partner
  for (int i = 0; i < 2000 && host.queued() != 2; ++i)
    std::this_thread::sleep_for(5ms);
  server.push(model, all(6.0f)); // (5 + 6) too: the primary steps by 7 + 11
  await_version(host, 1);
  EXPECT_EQ(host.model().state.at("l0")(0), 1.0f - 18.0f) << "kept: the newest 3 of 5";
}

TEST_F(grad_server_alone, the_learning_rate_schedule_is_stepped_with_the_optimizer) {
  auto options = machin_options(troupe::reduce_method::mean);
  troupe::push_pull_grad_server_host host{group, "grads", options};
  float rate = 1.0f;
  int steps = 0;
  host.manage_model(
    chain(),
    [&rate](troupe::state_dict& p, const troupe::state_dict& g) {
      for (auto& [key, tensor] : p)
        tensor -= rate * g.at(key);
    },
    [&] {
      rate /= 2;
      ++steps;
    });
  host.start();
  troupe::push_pull_grad_server server{group, "grads", options};
  troupe::versioned_model model = chain();
  for (int i = 0; i < 8; ++i) // 8 pushes: 4 secondary reductions, 2 optimizer steps
    server.push(model, chain_gradients());
  await_version(host, 2);
  host.stop();
  EXPECT_EQ(steps, 2);
  EXPECT_EQ(rate, 0.25f);
  EXPECT_EQ(host.model().state.at("l0")(0), 1.0f - 6.0f - 0.5f * 6.0f) << "the second step at half";
}

TEST_F(grad_server_alone, refuses_what_machin_asserts_against) {
  const auto with = [](auto change) {
    auto options = machin_options(troupe::reduce_method::sum);
    change(options);
    return options;
  };
  EXPECT_THROW((troupe::push_pull_grad_server_host{group, "a",
                                                   with([](auto& o) { o.reduce_batch_size = 1; })}),
               troupe::invalid_argument);
  EXPECT_THROW(
    (troupe::push_pull_grad_server_host{group, "b", with([](auto& o) { o.max_queue_size = 2; })}),
    troupe::invalid_argument);
  EXPECT_THROW((troupe::push_pull_grad_server_host{
                 group, "c", with([](auto& o) { o.secondaries = {"stranger"}; })}),
               troupe::invalid_argument);
  troupe::push_pull_grad_server_host host{group, "d", machin_options(troupe::reduce_method::sum)};
  host.start();
  EXPECT_THROW(host.manage_model(chain(), minus_gradient), troupe::state_error);
}

// A secondary reducer that dies: pushes to it fail over to another.

TROUPE_ROLE(secondary_reducer) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("grads", world.members());
    troupe::grad_server_options options{.secondaries = {"0", "1"}, .reduce_batch_size = 2};
    troupe::push_pull_grad_server_host host{group, "grads", options};
    host.start();
    group.barrier();
    std::this_thread::sleep_for(60s); // until the test kills it
  });
}

/// A world of two: this process hosts the primary and a secondary; member "1", a process, the
/// other secondary.
class grad_server_failover : public ::testing::Test {
protected:
  grad_server_failover() {
    host.manage_model(chain(), minus_gradient);
    host.start();
    group.barrier();
  }

  int port = free_port();
  member_process reducer{"secondary_reducer", member_environment(1, 2, port)};
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 2, port)};
  troupe::rpc_group group = world.create_rpc_group("grads", two);
  troupe::grad_server_options options{.secondaries = {"0", "1"}, .reduce_batch_size = 2};
  troupe::push_pull_grad_server_host host{group, "grads", options};
};

TEST_F(grad_server_failover, a_dead_secondary_makes_pushes_try_another) {
  reducer.signal(SIGKILL);
  EXPECT_EQ(reducer.exit_code(5s), 128 + SIGKILL);
  troupe::push_pull_grad_server server{group, "grads", options};
  troupe::versioned_model model = chain();
  // 12 pushes pick "1" first at random (all but once in 4,096 runs); each lands on "0".
  for (int i = 0; i < 12; ++i)
    EXPECT_NO_THROW(server.push(model, chain_gradients()));
  await_version(host, 3);
  EXPECT_EQ(host.model().version, 3) << "12 pushes, batches of 2 at both levels";
}

// A gradient client with a call timeout: a push to a secondary that froze ends with
// timeout_error in that time, rather than waiting as long as the reducer is in the world.
TEST_F(grad_server_failover, a_push_to_a_frozen_secondary_ends_at_the_call_timeout) {
  ASSERT_TRUE(reducer.freeze());
  auto client = options;
  client.secondaries = {"1"};
  client.call_timeout = 300ms;
  troupe::push_pull_grad_server server{group, "grads", client};
  troupe::versioned_model model = chain();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(server.push(model, chain_gradients()), troupe::timeout_error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  reducer.signal(SIGCONT);
  reducer.signal(SIGKILL);
  EXPECT_EQ(reducer.exit_code(5s), 128 + SIGKILL);
  client.call_timeout = 0ms;
  EXPECT_THROW(troupe::push_pull_grad_server(group, "grads", client), troupe::invalid_argument);
}

/// Hosts an ordered_server "store" until the test kills it.
TROUPE_ROLE(store_host) {
  return as_member([](troupe::world& world) {
    auto group = world.create_rpc_group("ps", world.members());
    troupe::ordered_server_host host{group, "store"};
    troupe::push_pull_model_server_host models{group, "models"};
    group.barrier();
    std::this_thread::sleep_for(60s);
  });
}

TEST(ordered_server_failure, a_server_whose_host_is_gone_fails_calls_with_peer_lost_naming_it) {
  const int port = free_port();
  member_process host{"store_host", member_environment(1, 2, port)};
  troupe::runtime rt;
  troupe::world world{rt, member_options(0, 2, port)};
  auto group = world.create_rpc_group("ps", two);
  group.barrier();
  troupe::ordered_server store{group, "store"};
  EXPECT_TRUE(store.push("a", std::string{"v"}, 1));
  host.kill_and_collect();
  wait_until_gone(group, "1");
  for (int call = 0; call < 2; ++call) { // the owner it knew, then rank 0's tables
    try {
      store.pull<std::string>("a");
      ADD_FAILURE() << "a pull from a gone host returned";
    } catch (const troupe::peer_lost& e) {
      EXPECT_NE(std::string{e.what()}.find("member '1' (rank 1)"), std::string::npos) << e.what();
    }
  }
  try { // a server never seen before asks rank 0 first
    troupe::ordered_server{group, "store"}.pull<std::string>("a");
    ADD_FAILURE() << "a pull from a gone host returned";
  } catch (const troupe::peer_lost& e) {
    EXPECT_NE(std::string{e.what()}.find("member '1' (rank 1)"), std::string::npos) << e.what();
  }
}

// A host that froze (stopped, not gone): without a timeout a call waits as long as the host is
// in the world; with one it fails with timeout_error in that time, for every server client.
TEST(ordered_server_failure, calls_to_a_frozen_host_end_at_their_timeout) {
  const int port = free_port();
  member_process host{"store_host", member_environment(1, 2, port)};
  troupe::runtime rt;
  auto options = member_options(0, 2, port);
  options.shared_memory = false; // over TCP, where a frozen host still holds its connection
  troupe::world world{rt, options};
  auto group = world.create_rpc_group("ps", two);
  group.barrier();
  troupe::ordered_server store{group, "store", 300ms};
  EXPECT_TRUE(store.push("a", std::string{"v"}, 1)) << "answered while the host runs";
  EXPECT_THROW((void)troupe::ordered_server(group, "store", 0ms), troupe::invalid_argument);
  ASSERT_TRUE(host.freeze());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW((void)store.pull<std::string>("a"), troupe::timeout_error);
  EXPECT_THROW(store.push("a", std::string{"w"}, 2, 1), troupe::timeout_error);
  troupe::versioned_model model;
  EXPECT_THROW((void)troupe::push_pull_model_server(group, "models", "model", 300ms).pull(model),
               troupe::timeout_error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  host.signal(SIGCONT);
  host.kill_and_collect();
}

} // namespace
} // namespace troupe::testing
