// What members of the hosts' worlds call on each other, whichever case they play in.
#pragma once

#include "troupe/actors/actor_type.hpp"
#include "troupe/actors/task.hpp"

#include <unistd.h>

TROUPE_TASK(host_add, [](int a, int b) { return a + b; });
TROUPE_TASK(host_pid, [](int) { return static_cast<int>(::getpid()); });

/// An actor a member of the hosts' world makes on another: a count, and the process it is in.
struct host_counter {
  explicit host_counter(int start) : n(start) {}
  int get() const { return n; }
  int pid() const { return ::getpid(); }
  int n;
};
TROUPE_ACTOR(host_counter, int, &host_counter::get, &host_counter::pid);
