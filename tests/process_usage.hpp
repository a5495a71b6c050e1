// What a test process uses now: resident memory and CPU time, for tests that bound what a
// stranger or a fault may cost, and listening sockets, for tests that act once another
// process listens.
#pragma once

#include <sys/resource.h>

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

/// How many TCP sockets (IPv4 and IPv6) process `pid` has listening: its descriptors' socket
/// inodes that /proc/net/tcp lists in state 0A (LISTEN).
inline int listening_sockets(int pid) {
  std::set<std::string> inodes;
  std::error_code error;
  const std::string prefix = "socket:[";
  for (const auto& entry :
       std::filesystem::directory_iterator{"/proc/" + std::to_string(pid) + "/fd", error}) {
    const auto target = std::filesystem::read_symlink(entry.path(), error).string();
    if (!error && target.rfind(prefix, 0) == 0)
      inodes.insert(target.substr(prefix.size(), target.size() - prefix.size() - 1));
  }
  int listening = 0;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in{table};
    std::string line;
    std::getline(in, line); // the header
    while (std::getline(in, line)) {
      std::istringstream fields{line};
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
        timeout >> inode;
      listening += state == "0A" && inodes.contains(inode);
    }
  }
  return listening;
}

} // namespace troupe::testing
