// What a test process uses now: resident memory and CPU time, for tests that bound what a
// stranger or a fault may cost, and TCP sockets, for tests that act once another process
// opens one.
#pragma once

#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace troupe::testing {

/// Resident memory in KiB (VmRSS), or -1 if /proc does not say.
inline long resident_kib() {
  std::ifstream status{"/proc/self/status"};
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stol(line.substr(6));
  return -1;
}

/// User and system CPU time used so far, in seconds.
inline double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

/// How many TCP sockets (IPv4 and IPv6) process `pid` has open: its descriptors' socket inodes
/// that /proc/net/tcp lists.
inline int tcp_sockets(int pid) {
  std::set<std::string> inodes;
  std::error_code error;
  const std::string prefix = "socket:[";
  for (const auto& entry :
       std::filesystem::directory_iterator{"/proc/" + std::to_string(pid) + "/fd", error}) {
    const auto target = std::filesystem::read_symlink(entry.path(), error).string();
    if (!error && target.rfind(prefix, 0) == 0)
      inodes.insert(target.substr(prefix.size(), target.size() - prefix.size() - 1));
  }
  int open = 0;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in{table};
    std::string line;
    std::getline(in, line); // the header
    while (std::getline(in, line)) {
      std::istringstream fields{line};
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
        timeout >> inode;
      open += inodes.contains(inode);
    }
  }
  return open;
}

/// Whether a socket listens on TCP `port` (on any address) in this network namespace: for
/// tests that start peers only once their listener is up, so that no peer's own listener takes
/// the port first.
inline bool listening_on(int port) {
  char wanted[8];
  std::snprintf(wanted, sizeof wanted, ":%04X", port);
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in{table};
    std::string line, slot, local, remote, state;
    std::getline(in, line);
    while (std::getline(in, line)) {
      std::istringstream fields{line};
      fields >> slot >> local >> remote >> state;
      if (state == "0A" && local.size() > 5 && local.compare(local.size() - 5, 5, wanted) == 0)
        return true;
    }
  }
  return false;
}

} // namespace troupe::testing
