// What this test process uses now: resident memory and CPU time, for tests that bound what a
// stranger or a fault may cost.
#pragma once

#include <sys/resource.h>

#include <fstream>
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

} // namespace troupe::testing
