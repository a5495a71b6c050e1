// Worker nodes from other hosts (here: this program again, started as a node on 127.0.0.1),
// each case twice: with the pool's secret alone, and over TLS with certificates from
// scripts/make-certs.sh. A node joins late, brings several slots, dies or freezes mid-task or
// while idle, is refused, and strangers on the port do not keep it out.
#include "../eventually.hpp"
#include "../process_usage.hpp"
#include "process_test_support.hpp"

#include "troupe/actors/tensor_serialization.hpp"
#include "troupe/pools/process_pool.hpp"

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

extern char** environ;

using namespace std::chrono_literals;

TROUPE_TASK(node_square, [](int x) { return x * x; });
TROUPE_TASK(node_pid, [](int) { return static_cast<int>(getpid()); });
TROUPE_TASK(node_tensor_size, [](xt::xarray<float> t) { return t.size(); });
TROUPE_TASK(slow_pid, [](int) {
  std::this_thread::sleep_for(std::chrono::milliseconds{50});
  return static_cast<int>(getpid());
});

/// A context a node makes for itself, with the slot index the pool gives it.
struct node_device {
  std::size_t index;
  int owner_pid;
};
TROUPE_CONTEXT_FACTORY(open_node_device, [](std::size_t index) {
  return node_device{index, static_cast<int>(getpid())};
});
TROUPE_TASK(use_node_device, [](node_device& d, int x) {
  return std::tuple<int, int, int>{static_cast<int>(d.index), d.owner_pid == getpid(), x};
});

namespace {

using troupe::testing::eventually;
using troupe::testing::iota;
using troupe::testing::start_busy_task;

/// How nodes prove themselves in a case: the secret alone, or TLS certificates.
enum class credentials { secret, tls };

std::string name_of(const ::testing::TestParamInfo<credentials>& info) {
  return info.param == credentials::secret ? "secret" : "tls";
}

/// Certificates for the whole suite: "pool" and "node" from one CA, "rogue" from another.
class certificates {
public:
  static const certificates& get() {
    static const certificates made;
    return made;
  }
  std::string folder, foreign;

private:
  certificates() {
    folder = make("troupe-node-certs");
    foreign = make("troupe-node-rogue");
    std::system(
      (std::string{TROUPE_MAKE_CERTS} + " " + folder + " pool=127.0.0.1 node >/dev/null").c_str());
    std::system((std::string{TROUPE_MAKE_CERTS} + " " + foreign + " rogue >/dev/null").c_str());
  }
  ~certificates() {
    std::error_code ignored;
    std::filesystem::remove_all(folder, ignored);
    std::filesystem::remove_all(foreign, ignored);
  }
  static std::string make(const char* stem) {
    std::string pattern = (std::filesystem::temp_directory_path() / stem).string() + "-XXXXXX";
    return ::mkdtemp(pattern.data()) != nullptr ? pattern : std::string{};
  }
};

/// A raw connection to the pool's port, as a stranger would open it.
int connect_stranger(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &where.sin_addr);
  connect(fd, reinterpret_cast<sockaddr*>(&where), sizeof where);
  return fd;
}

class process_pool_nodes : public ::testing::TestWithParam<credentials> {
protected:
  /// Options of a pool that takes nodes with this case's credentials.
  troupe::process_pool_options options(troupe::process_pool_options base = {.workers = 1}) const {
    base.remote_secret = "s3cret";
    if (GetParam() == credentials::tls)
      base.tls = tls_of(certificates::get().folder, "pool");
    return base;
  }

  static troupe::tls_options tls_of(const std::string& folder, const std::string& name) {
    return {folder + "/" + name + ".pem", folder + "/" + name + ".key", folder + "/ca.pem", {}};
  }

  /// The environment of a node with this case's credentials; `wrong` gives it a wrong secret,
  /// or a certificate from another CA.
  std::vector<std::string> node_environment(bool wrong = false) const {
    std::vector<std::string> env{std::string{"TROUPE_SECRET="} +
                                 (wrong && GetParam() == credentials::secret ? "guess" : "s3cret")};
    if (GetParam() == credentials::tls) {
      const auto& certs = certificates::get();
      const auto folder = wrong ? certs.foreign : certs.folder;
      const auto name = wrong ? "rogue" : "node";
      env.push_back("TROUPE_TLS_CERT=" + folder + "/" + name + ".pem");
      env.push_back("TROUPE_TLS_KEY=" + folder + "/" + name + ".key");
      env.push_back("TROUPE_TLS_CA=" + folder + "/ca.pem");
    }
    return env;
  }

  /// Starts this program as a node joining the pool on `port`; `args` replaces the join flag.
  pid_t start_node(std::uint16_t port, std::vector<std::string> extra_env = {},
                   std::vector<std::string> args = {}, bool wrong = false) const {
    if (args.empty())
      args = {"--troupe-join=127.0.0.1:" + std::to_string(port)};
    args.insert(args.begin(), "node");
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    // This process's environment (a sanitizer's options, say), with the node's own on top.
    auto env_strings = node_environment(wrong);
    env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
    for (char** at = environ; *at != nullptr; ++at) {
      const std::string entry{*at};
      const auto key = entry.substr(0, entry.find('=') + 1);
      if (key.starts_with("TROUPE_"))
        continue;
      env_strings.push_back(entry);
    }
    std::vector<char*> env;
    for (auto& e : env_strings)
      env.push_back(e.data());
    env.push_back(nullptr);
    pid_t pid = -1;
    posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), env.data());
    return pid;
  }

  /// Starts a node, puts one long task on it and one on the local worker, then stops the node
  /// with `signal`: what it held fails with worker_lost, its slot goes, the pool keeps serving.
  void expect_node_stopped_mid_task_to_be_lost(troupe::process_pool& pool, int signal) {
    const pid_t node = start_node(pool.listen_port());
    ASSERT_TRUE(eventually([&] { return pool.size() == 2; }));
    auto [a, pid_a] = start_busy_task(pool, "node-a");
    auto [b, pid_b] = start_busy_task(pool, "node-b");
    ASSERT_TRUE(pid_a == node || pid_b == node) << "neither task reached the node";
    kill(node, signal);
    EXPECT_THROW((void)(pid_a == node ? a : b).get(10s), troupe::worker_lost);
    EXPECT_TRUE(eventually([&] { return pool.size() == 1; })) << "the lost node kept its slot";
    kill(node, SIGKILL);
    waitpid(node, nullptr, 0);
    kill(pid_a == node ? pid_b : pid_a, SIGKILL); // free the local worker
    EXPECT_EQ(pool.map(node_square, iota(100)).size(), 100u) << "the pool keeps serving";
  }

  troupe::runtime rt;
};

TEST_P(process_pool_nodes, a_node_that_joins_late_takes_its_share_of_the_work) {
  troupe::process_pool pool{rt, options()};
  ASSERT_GT(pool.listen_port(), 0);
  EXPECT_EQ(pool.size(), 1u);
  EXPECT_EQ(pool.map(node_square, iota(10)).size(), 10u); // running before the node comes
  const pid_t node = start_node(pool.listen_port());
  ASSERT_TRUE(eventually([&] { return pool.size() == 2; })) << "the node did not join";
  std::set<int> pids;
  ASSERT_TRUE(eventually([&] {
    for (int pid : pool.map(node_pid, iota(400), 1))
      pids.insert(pid);
    return pids.count(node) == 1;
  }))
    << "no work reached the node";
  EXPECT_EQ(pool.map(node_square, iota(1000), 7).back(), 999 * 999);
  pool.close();
  pool.join();
  int status = 0;
  EXPECT_TRUE(eventually([&] { return waitpid(node, &status, WNOHANG) == node; }))
    << "the node outlived the pool";
}

TEST_P(process_pool_nodes, a_node_brings_as_many_workers_as_it_is_told) {
  troupe::process_pool pool{rt, options()};
  const auto port = std::to_string(pool.listen_port());
  const pid_t node = start_node(pool.listen_port(), {"TROUPE_NODE_WORKERS=2"},
                                {"--troupe-join", "127.0.0.1:" + port});
  ASSERT_TRUE(eventually([&] { return pool.size() == 3; })) << "the node's two slots did not join";
  std::set<int> pids;
  ASSERT_TRUE(eventually([&] {
    for (int pid : pool.map(node_pid, iota(400), 1))
      pids.insert(pid);
    return pids.size() == 3;
  }))
    << "work did not reach all three workers";
  EXPECT_EQ(pids.count(node), 1u);
  kill(node, SIGKILL); // its other slot dies with it
  waitpid(node, nullptr, 0);
  // Both slots leave as soon as they are found lost, without work offered to them first.
  EXPECT_TRUE(eventually([&] { return pool.size() == 1; }, 5s)) << "the node's slots outlived it";
  EXPECT_EQ(pool.map(node_square, iota(200), 1).back(), 199 * 199);
}

TEST_P(process_pool_nodes, a_node_that_freezes_while_idle_leaves_the_pool) {
  troupe::process_pool pool{rt, options()};
  const pid_t node = start_node(pool.listen_port());
  ASSERT_TRUE(eventually([&] { return pool.size() == 2; }));
  kill(node, SIGSTOP);
  EXPECT_TRUE(eventually([&] { return pool.size() == 1; }, 6s)) << "the frozen node kept its slot";
  kill(node, SIGKILL);
  waitpid(node, nullptr, 0);
  EXPECT_EQ(pool.apply(node_square, 4), 16);
}

TEST_P(process_pool_nodes, a_node_told_a_nonsense_worker_count_says_so) {
  troupe::process_pool pool{rt, options()};
  const pid_t node = start_node(pool.listen_port(), {"TROUPE_NODE_WORKERS=many"});
  int status = 0;
  ASSERT_TRUE(eventually([&] { return waitpid(node, &status, WNOHANG) == node; }));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2);
  EXPECT_EQ(pool.size(), 1u);
}

TEST_P(process_pool_nodes, two_hundred_strangers_on_the_port_do_not_keep_nodes_out) {
  troupe::process_pool pool{rt, options()};
  std::vector<int> strangers;
  for (int i = 0; i < 200; ++i)
    strangers.push_back(connect_stranger(pool.listen_port())); // say nothing at all
  const int greedy = connect_stranger(pool.listen_port());
  const std::uint32_t huge_greeting[2] = {1, 1u << 30}; // announces a 1 GiB frame, never sent
  ASSERT_EQ(write(greedy, huge_greeting, sizeof huge_greeting), 8);
  const pid_t node = start_node(pool.listen_port());
  EXPECT_TRUE(eventually([&] { return pool.size() == 2; })) << "the strangers kept the node out";
  EXPECT_EQ(pool.apply(node_square, 5), 25);
  for (int fd : strangers)
    close(fd);
  close(greedy);
  kill(node, SIGKILL);
  waitpid(node, nullptr, 0);
}

TEST_P(process_pool_nodes, a_node_without_the_credentials_is_refused) {
  troupe::process_pool pool{rt, options()};
  const pid_t intruder = start_node(pool.listen_port(), {}, {}, true);
  int status = 0;
  ASSERT_TRUE(eventually([&] { return waitpid(intruder, &status, WNOHANG) == intruder; }, 20s));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "the node was not told no";
  EXPECT_EQ(pool.size(), 1u);
  EXPECT_EQ(pool.apply(node_square, 3), 9);
}

// Over TLS, one connection's end once ended every other (CAF's OpenSSL module read another
// connection's error as its own): every node exited when one died or a stranger came and went.
TEST_P(process_pool_nodes, one_nodes_end_or_a_strangers_visit_leaves_the_other_nodes_serving) {
  troupe::process_pool pool{rt, options()};
  const pid_t doomed = start_node(pool.listen_port());
  const pid_t steady = start_node(pool.listen_port());
  ASSERT_TRUE(eventually([&] { return pool.size() == 3; })) << "the nodes did not join";
  kill(doomed, SIGKILL);
  waitpid(doomed, nullptr, 0);
  for (int i = 0; i < 5; ++i)
    close(connect_stranger(pool.listen_port())); // connect and close, no handshake
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(waitpid(steady, nullptr, WNOHANG), 0) << "the other node exited";
  EXPECT_TRUE(eventually([&] { return pool.size() == 2; })) << "the other node left the pool";
  EXPECT_EQ(pool.map(node_square, iota(100), 1).back(), 99 * 99);
  kill(steady, SIGKILL);
  waitpid(steady, nullptr, 0);
}

TEST_P(process_pool_nodes, a_node_that_dies_fails_what_it_held_and_leaves_the_pool) {
  troupe::process_pool pool{rt, options()};
  expect_node_stopped_mid_task_to_be_lost(pool, SIGKILL);
}

// The same kill, without retries and with: without, what the node held fails (so it did hold
// work when it died); with, that work runs again on the local worker.
TEST_P(process_pool_nodes, max_retries_runs_again_what_a_lost_node_held) {
  for (const std::size_t retries : {0u, 1u}) {
    troupe::process_pool pool{rt, options({.workers = 1, .max_retries = retries})};
    const pid_t node = start_node(pool.listen_port());
    ASSERT_TRUE(eventually([&] { return pool.size() == 2; }));
    auto all = pool.map_async(slow_pid, iota(40), 1);
    std::this_thread::sleep_for(300ms); // both workers are busy with the map by now
    kill(node, SIGKILL);
    waitpid(node, nullptr, 0);
    if (retries == 0) {
      EXPECT_THROW((void)std::move(all).get(30s), troupe::worker_lost);
    } else {
      EXPECT_EQ(std::move(all).get(30s).size(), 40u);
      EXPECT_EQ(pool.size(), 1u) << "the lost node kept its slot";
    }
  }
}

TEST_P(process_pool_nodes, a_node_that_goes_silent_is_taken_for_lost) {
  // SIGSTOP keeps the node's connection open: only its heartbeats stop.
  troupe::process_pool pool{rt, options({.workers = 1, .heartbeat_timeout = 300ms})};
  expect_node_stopped_mid_task_to_be_lost(pool, SIGSTOP);
}

TEST_P(process_pool_nodes, a_node_frozen_while_a_large_argument_is_sent_is_lost_not_waited_on) {
  troupe::process_pool pool{rt, options()};
  const pid_t node = start_node(pool.listen_port());
  ASSERT_TRUE(eventually([&] { return pool.size() == 2; }));
  kill(node, SIGSTOP);
  // 150 MB for each worker: the node's share goes into a connection nobody reads.
  std::vector<xt::xarray<float>> large(2, xt::xarray<float>(xt::ones<float>({37'500'000})));
  const auto start = std::chrono::steady_clock::now();
  try {
    // The local worker, run dry before the node's share left (under ThreadSanitizer, encoding
    // 150 MB is slow), takes that share back: nothing is lost or waited on either.
    const auto sizes = pool.map(node_tensor_size, large, 1);
    EXPECT_EQ(sizes, (std::vector<std::size_t>(2, 37'500'000)));
  } catch (const troupe::worker_lost&) {
    // The share was on its way to the node: lost with it.
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
  kill(node, SIGKILL);
  waitpid(node, nullptr, 0);
  EXPECT_EQ(pool.apply(node_square, 6), 36);
}

TEST_P(process_pool_nodes, a_node_gets_its_context_from_the_pools_factory) {
  auto base = options();
  troupe::ctx_process_pool<node_device> pool{rt, open_node_device, base};
  const pid_t node = start_node(pool.listen_port());
  ASSERT_TRUE(eventually([&] { return pool.size() == 2; }));
  std::set<int> indices;
  ASSERT_TRUE(eventually([&] {
    for (auto [index, made_here, x] : pool.map(use_node_device, iota(200), 1)) {
      EXPECT_EQ(made_here, 1);
      indices.insert(index);
    }
    return indices.size() == 2;
  }))
    << "the node (slot 1) never ran a task with its own context";
  EXPECT_EQ(indices, (std::set<int>{0, 1}));
  kill(node, SIGKILL);
  waitpid(node, nullptr, 0);
}

INSTANTIATE_TEST_SUITE_P(credentials, process_pool_nodes,
                         ::testing::Values(credentials::secret, credentials::tls), name_of);

/// Over TLS a stranger never reaches CAF's frame reader: a forged frame header that announces
/// 1 GiB makes the pool allocate nothing for it. (Over plain TCP it would: see docs/guide/pools.md,
/// nodes.)
TEST(process_pool_node_gate, a_forged_frame_header_costs_a_tls_pool_no_memory) {
  troupe::runtime rt;
  const auto& certs = certificates::get();
  troupe::process_pool pool{
    rt,
    {.workers = 1,
     .remote_secret = "s",
     .tls = troupe::tls_options{
       certs.folder + "/pool.pem", certs.folder + "/pool.key", certs.folder + "/ca.pem", {}}}};
  const long before = troupe::testing::resident_kib();
  const int stranger = connect_stranger(pool.listen_port());
  unsigned char header[32] = {}; // a BASP client handshake announcing a 1 GiB payload
  header[0] = 0x01;
  const std::uint32_t length = htonl(1u << 30);
  std::memcpy(header + 4, &length, sizeof length);
  ASSERT_EQ(write(stranger, header, sizeof header), 32);
  std::this_thread::sleep_for(500ms);
  EXPECT_LT(troupe::testing::resident_kib() - before, 64 * 1024)
    << "the pool allocated for the forged frame";
  close(stranger);
  EXPECT_EQ(pool.apply(node_square, 2), 4);
}

TEST(process_pool_node_gate, listening_beyond_loopback_needs_tls_or_allow_insecure) {
  troupe::runtime rt;
  try {
    troupe::process_pool pool{rt,
                              {.workers = 1, .remote_secret = "s", .listen_address = "0.0.0.0"}};
    ADD_FAILURE() << "listened beyond loopback without TLS";
  } catch (const troupe::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find("without TLS"), std::string::npos) << e.what();
  }
}

} // namespace
