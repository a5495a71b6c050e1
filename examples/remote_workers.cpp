// A process pool that worker nodes on other hosts join over TCP.
//
// On one machine (the program starts a node itself, as another host would):
//
//   ./build/examples/remote_workers
//
// Across hosts (the same binary on each), over TLS with certificates from
// `scripts/make-certs.sh certs hostA hostB hostC` (the secret, proven but never sent, keeps out
// whoever has a certificate but not the secret):
//
//   host A:  TROUPE_SECRET=pick-one ./remote_workers --listen 0.0.0.0:7070 --nodes 5
//              --tls-dir certs --tls-name hostA
//   host B:  TROUPE_SECRET=pick-one TROUPE_TLS_CERT=certs/hostB.pem TROUPE_TLS_KEY=certs/hostB.key
//              TROUPE_TLS_CA=certs/ca.pem ./remote_workers --troupe-join hostA:7070
//   host C:  the same with hostC's files, and TROUPE_NODE_WORKERS=4 for four slots
//
// `--insecure` instead of the TLS options listens beyond loopback without TLS (a trusted network
// only: the traffic is then neither encrypted nor authenticated).
//
// A node serves the pool until the pool closes, then exits.
#include <troupe/troupe.hpp>

#include <CLI/CLI.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

struct prime_count {
  std::string host;
  int pid = 0;
  int primes = 0;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(host, pid, primes);
  }
};

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

/// Counts the primes in [from, from + 10000): enough work that spreading it pays.
TROUPE_TASK(count_primes, [](int from) {
  int primes = 0;
  for (int n = std::max(from, 2); n < from + 10000; ++n) {
    bool prime = true;
    for (int d = 2; d * d <= n && prime; ++d)
      prime = n % d != 0;
    primes += prime ? 1 : 0;
  }
  return prime_count{host_name(), static_cast<int>(getpid()), primes};
});

std::string random_secret() {
  std::random_device entropy;
  std::string secret;
  for (int i = 0; i < 4; ++i)
    secret += std::to_string(entropy());
  return secret;
}

/// Plays the other host: this same program, started with --troupe-join.
pid_t start_local_node(std::uint16_t port) {
  std::string self = "remote_workers";
  std::string join = "--troupe-join=127.0.0.1:" + std::to_string(port);
  char* argv[] = {self.data(), join.data(), nullptr};
  pid_t pid = -1;
  posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, environ);
  return pid;
}

} // namespace

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv}; // with --troupe-join, this process serves as a node instead

  CLI::App app{"A troupe process pool that worker nodes on other hosts join."};
  std::string listen;
  int nodes = 1;
  int local_workers = 1;
  app.add_option("--listen", listen,
                 "HOST:PORT to take nodes on; without it the pool listens on loopback and "
                 "starts one node itself");
  app
    .add_option("--nodes", nodes,
                "Node workers to wait for before working (TROUPE_NODE_WORKERS=4 on a node "
                "brings 4)")
    ->check(CLI::PositiveNumber);
  app.add_option("--workers", local_workers, "Worker processes on this host")
    ->check(CLI::PositiveNumber);
  std::string tls_dir, tls_name;
  bool insecure = false;
  app.add_option("--tls-dir", tls_dir, "Folder of make-certs.sh's files: TLS with nodes");
  app.add_option("--tls-name", tls_name, "This host's certificate name in --tls-dir");
  app.add_flag("--insecure", insecure, "Listen beyond loopback without TLS");
  CLI11_PARSE(app, argc, argv);

  troupe::process_pool_options options{.workers = local_workers};
  const bool self_contained = listen.empty();
  if (self_contained) {
    // Nodes inherit the secret from the environment, as they would on another host.
    options.remote_secret = random_secret();
    setenv("TROUPE_SECRET", options.remote_secret.c_str(), 1);
  } else {
    const char* secret = std::getenv("TROUPE_SECRET");
    if (secret == nullptr || *secret == '\0') {
      std::cerr << "remote_workers: set TROUPE_SECRET (the same on every host) before --listen\n";
      return 2;
    }
    const auto colon = listen.rfind(':');
    const std::string port = colon == std::string::npos ? "" : listen.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
      std::cerr << "remote_workers: --listen wants HOST:PORT with a port up to 65535, got '"
                << listen << "'\n";
      return 2;
    }
    options.remote_secret = secret;
    options.allow_insecure = insecure;
    if (!tls_dir.empty())
      options.tls = troupe::tls_options{.certificate = tls_dir + "/" + tls_name + ".pem",
                                        .key = tls_dir + "/" + tls_name + ".key",
                                        .ca_file = tls_dir + "/ca.pem"};
    options.listen_address = listen.substr(0, colon);
    options.listen_port = static_cast<std::uint16_t>(std::stoi(port));
  }

  std::optional<troupe::process_pool> started;
  try {
    started.emplace(rt, options);
  } catch (const troupe::error& e) { // a bad address, or the port is taken
    std::cerr << "remote_workers: " << e.what() << '\n';
    return 2;
  }
  auto& pool = *started;
  std::cout << "pool: " << local_workers << " local worker(s), taking nodes on port "
            << pool.listen_port() << '\n';
  pid_t node = -1;
  if (self_contained)
    node = start_local_node(pool.listen_port());

  const auto wanted = static_cast<std::size_t>(local_workers + nodes);
  const auto deadline =
    std::chrono::steady_clock::now() + std::chrono::minutes(self_contained ? 1 : 60);
  while (pool.size() < wanted) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::cerr << "remote_workers: only " << pool.size() - local_workers << " of " << nodes
                << " node worker(s) joined\n";
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::cout << "pool: " << pool.size() - local_workers << " node worker(s) joined, " << pool.size()
            << " workers in all\n";

  std::vector<int> starts;
  for (int from = 0; from < 2'000'000; from += 10'000)
    starts.push_back(from);
  int total = 0;
  std::map<int, int> chunks_by_worker;
  std::map<int, std::string> host_of;
  for (const auto& r : pool.map(count_primes, starts, 1)) {
    total += r.primes;
    ++chunks_by_worker[r.pid];
    host_of[r.pid] = r.host;
  }
  std::cout << "primes below 2,000,000: " << total << '\n';
  for (auto [pid, count] : chunks_by_worker)
    std::cout << "  worker " << pid << " on " << host_of[pid] << (pid == node ? " (the node)" : "")
              << ": " << count << " ranges\n";

  pool.close();
  pool.join();
  if (node > 0)
    waitpid(node, nullptr, 0); // the node leaves when the pool closes
  // The answer is known (pi(2e6) = 148933) and every worker waited for must have taken part.
  return total == 148933 && chunks_by_worker.size() >= wanted ? 0 : 1;
}
