// The floor under a world's barrier on this host: the same tree as troupe's (barrier_tree.hpp),
// met by as many forked processes, each one thread blocking on Unix socket pairs to its parent
// and children: one byte up when a member and its children have arrived, one byte down at the
// release. No runtime, no serialization, no thread hand-offs: what the processes' wake-ups and
// the kernel's sockets cost alone, for world_barrier_us_N to be read against.
#pragma once

#include "../tests/queues/process_support.hpp" // wait_for: the members reaped with a deadline
#include "barrier_tree.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace troupe::bench {

namespace floor_detail {

/// One member's part: `rounds` barriers. False if a neighbour went away (its socket closed).
inline bool meet(int up, const std::vector<int>& children, int rounds) {
  char token = 0;
  for (int round = 0; round < rounds; ++round) {
    for (const int child : children)
      if (::read(child, &token, 1) != 1)
        return false;
    if (up >= 0 && (::write(up, &token, 1) != 1 || ::read(up, &token, 1) != 1))
      return false;
    for (const int child : children)
      if (::write(child, &token, 1) != 1)
        return false;
  }
  return true;
}

/// In member `p`'s process: closes the other members' ends.
inline void keep_only(std::size_t p, const std::vector<int>& up,
                      const std::vector<std::vector<int>>& down) {
  for (std::size_t q = 0; q < up.size(); ++q) {
    if (q == p)
      continue;
    if (up[q] >= 0)
      ::close(up[q]);
    for (const int end : down[q])
      ::close(end);
  }
}

} // namespace floor_detail

/// Mean microseconds of one barrier of `members` processes, over `rounds` (after one to warm
/// up). Called before this process starts threads: the children only read, write and exit.
inline double socket_tree_barrier_us(int members, int rounds) {
  const auto size = static_cast<std::size_t>(members);
  std::vector<int> up(size, -1);
  std::vector<std::vector<int>> down(size);
  for (std::size_t p = 1; p < size; ++p) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
      throw std::runtime_error("barrier floor: socketpair failed");
    up[p] = pair[0];
    down[*troupe::detail::place_in_tree(p, size).parent].push_back(pair[1]);
  }
  std::vector<pid_t> children;
  for (std::size_t p = 1; p < size; ++p) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      floor_detail::keep_only(p, up, down); // so that a neighbour's exit reads as an end
      ::_exit(floor_detail::meet(up[p], down[p], rounds + 1) ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (std::size_t p = 1; p < size; ++p) // the root keeps only its children's ends
    ::close(up[p]);
  for (std::size_t p = 1; p < size; ++p)
    for (const int end : down[p])
      ::close(end);
  bool met = floor_detail::meet(-1, down[0], 1);
  const auto start = std::chrono::steady_clock::now();
  met = met && floor_detail::meet(-1, down[0], rounds);
  const auto us =
    std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  for (const int end : down[0])
    ::close(end); // a member still waiting reads the end and leaves
  for (const pid_t pid : children)
    met = troupe::testing::wait_for(pid, std::chrono::seconds{30}) == 0 && met;
  if (!met)
    throw std::runtime_error("barrier floor: a member failed");
  return us / rounds;
}

} // namespace troupe::bench
