#include "etcd_servers.hpp"

#include "../../stopped_process.hpp"
#include "store/etcd_client.hpp"

#include <arpa/inet.h>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <netinet/in.h>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace troupe::testing {

namespace {

/// A port nothing listens on now (the kernel's choice for a socket bound to port 0).
std::uint16_t free_port(const std::string& host) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  ::inet_pton(AF_INET, host.c_str(), &address.sin_addr);
  socklen_t size = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    ::close(fd);
    throw std::runtime_error("etcd_servers: no free port on " + host);
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

std::string url(const std::string& scheme, const std::string& host, std::uint16_t port) {
  return scheme + "://" + host + ":" + std::to_string(port);
}

} // namespace

bool etcd_servers::installed() { return std::system("command -v etcd >/dev/null 2>&1") == 0; }

etcd_servers::etcd_servers(int count, std::string host, std::optional<etcd_tls> tls)
  : host_{std::move(host)}, tls_{std::move(tls)} {
  char folder[] = "/dev/shm/troupe-etcd-XXXXXX";
  if (::mkdtemp(folder) == nullptr)
    throw std::runtime_error("etcd_servers: cannot make a folder in /dev/shm");
  folder_ = folder;
  for (int i = 0; i < count; ++i)
    servers_.push_back({"etcd" + std::to_string(i), free_port(host_), free_port(host_), -1});
  for (int i = 0; i < count; ++i)
    launch(i, true);
  try {
    wait_until_answering(std::chrono::seconds{20});
  } catch (...) {
    end();
    throw;
  }
}

etcd_servers::~etcd_servers() { end(); }

void etcd_servers::end() {
  for (int i = 0; i < static_cast<int>(servers_.size()); ++i)
    kill(i);
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);
}

std::string etcd_servers::address() const {
  std::string text = "etcd://";
  for (const auto& s : servers_)
    text += (text.size() > 7 ? "," : "") + host_ + ":" + std::to_string(s.client_port);
  return text;
}

std::string etcd_servers::address_of(int index, const std::string& world) const {
  return "etcd://" + host_ + ":" +
         std::to_string(servers_.at(static_cast<std::size_t>(index)).client_port) + "/" + world;
}

namespace {

/// The text of http://host:port/metrics, or "" if the server does not answer.
std::string metrics_of(const std::string& host, std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  ::inet_pton(AF_INET, host.c_str(), &address.sin_addr);
  timeval limit{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  std::string text;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    const std::string request = "GET /metrics HTTP/1.0\r\nHost: " + host + "\r\n\r\n";
    if (::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char chunk[65536];
      for (ssize_t got; (got = ::read(fd, chunk, sizeof chunk)) > 0;)
        text.append(chunk, static_cast<std::size_t>(got));
    }
  }
  ::close(fd);
  return text;
}

} // namespace

std::map<std::string, double> etcd_servers::requests_started() const {
  constexpr std::string_view counter = "grpc_server_started_total{";
  constexpr std::string_view method = "grpc_method=\"";
  std::map<std::string, double> started;
  for (const auto& server : servers_) {
    if (server.pid < 0)
      continue;
    const auto text = metrics_of(host_, server.client_port);
    std::size_t at = 0;
    while ((at = text.find(counter, at)) != std::string::npos) {
      const auto line_end = text.find('\n', at);
      const auto line = text.substr(at, line_end - at);
      at = line_end;
      const auto name = line.find(method);
      const auto value = line.rfind(' ');
      if (name == std::string::npos || value == std::string::npos)
        continue;
      const auto name_start = name + method.size();
      started[line.substr(name_start, line.find('"', name_start) - name_start)] +=
        std::stod(line.substr(value + 1));
    }
  }
  return started;
}

std::vector<detail::store_endpoint> etcd_servers::endpoints() const {
  return detail::parse_store_address(address());
}

void etcd_servers::kill(int index) {
  auto& s = servers_.at(static_cast<std::size_t>(index));
  if (s.pid <= 0)
    return;
  ::kill(s.pid, SIGKILL);
  ::waitpid(s.pid, nullptr, 0);
  s.pid = -1;
}

void etcd_servers::restart(int index) { launch(index, false); }

void etcd_servers::pause(int index) {
  const auto pid = servers_.at(static_cast<std::size_t>(index)).pid;
  if (pid > 0 && !stop_process(pid))
    throw std::runtime_error("etcd_servers: server " + std::to_string(index) +
                             " did not stop within 5 s of SIGSTOP");
}

void etcd_servers::resume(int index) {
  if (const auto pid = servers_.at(static_cast<std::size_t>(index)).pid; pid > 0)
    ::kill(pid, SIGCONT);
}

// Heartbeat and election timeouts for a 3 s lease on a loaded 2-core machine: an election must
// end well inside the lease (a member's keeper cannot renew while there is no leader, and says
// the lease is gone after a TTL without renewal), so etcd's own 100 ms / 1 s; pre-vote keeps a
// server that missed heartbeats while the tests' processes took the cores from deposing a
// leader the others still hear.
void etcd_servers::launch(int index, bool fresh) {
  auto& s = servers_.at(static_cast<std::size_t>(index));
  const std::string client_scheme = tls_ ? "https" : "http";
  std::string cluster;
  for (const auto& other : servers_)
    cluster +=
      (cluster.empty() ? "" : ",") + other.name + "=" + url("http", host_, other.peer_port);
  std::vector<std::string> args{
    "etcd",
    "--name=" + s.name,
    "--data-dir=" + folder_ + "/" + s.name,
    "--listen-client-urls=" + url(client_scheme, host_, s.client_port),
    "--advertise-client-urls=" + url(client_scheme, host_, s.client_port),
    "--listen-peer-urls=" + url("http", host_, s.peer_port),
    "--initial-advertise-peer-urls=" + url("http", host_, s.peer_port),
    "--initial-cluster=" + cluster,
    "--initial-cluster-token=" + folder_,
    std::string{"--initial-cluster-state="} + (fresh ? "new" : "existing"),
    "--heartbeat-interval=100",
    "--election-timeout=1000",
    "--pre-vote",
    "--logger=zap",
    "--log-outputs=" + folder_ + "/" + s.name + ".log"};
  if (tls_) {
    args.push_back("--cert-file=" + tls_->certificate);
    args.push_back("--key-file=" + tls_->key);
    args.push_back("--client-cert-auth");
    args.push_back("--trusted-ca-file=" + tls_->ca_file);
  }
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(127);
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execvp("etcd", argv.data());
    ::_exit(127);
  }
  s.pid = pid;
}

void etcd_servers::wait_until_answering(std::chrono::seconds limit) const {
  detail::etcd::client_settings settings{endpoints(), nullptr, std::chrono::seconds{1}};
  if (tls_)
    settings.tls = detail::etcd::client_tls(tls_->certificate, tls_->key, tls_->ca_file, "");
  detail::etcd::client probe{settings};
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    try {
      probe.put("troupe-test-ready", "yes");
      return;
    } catch (const std::exception& e) {
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error(std::string{"etcd_servers: the cluster did not answer: "} +
                                 e.what());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
}

} // namespace troupe::testing
