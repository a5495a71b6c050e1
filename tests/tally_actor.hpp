// The actor the tests of actors in other processes (worker processes, world members) call: a
// count, and calls that sleep, throw, report their process, record their order, or leave a
// trace in a file. Registered, so every copy of the test program can make one.
#pragma once

#include "troupe/actors/actor_type.hpp"
#include "troupe/pools/this_worker.hpp"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace troupe::testing {

struct tally {
  explicit tally(int start) : n(start), made_in(slot()) {
    if (start < 0)
      throw std::domain_error("a tally starts at 0 or more, not " + std::to_string(start));
  }
  int add(int k) { return n += k; }
  int get() const { return n; }
  int pid() const { return getpid(); }
  /// The pool slot whose process it runs in (process_pool::spawn with in_slot), else -1: when
  /// called, and when it was made.
  int slot() const { return troupe::this_worker() ? static_cast<int>(this_worker()->index) : -1; }
  int slot_made_in() const { return made_in; }
  /// Sleeps for `ms` then returns n: a call the test can kill the process in.
  int slow(int ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds{ms});
    return n;
  }
  void fail(std::string why) { throw std::out_of_range(why); }
  std::string describe(std::string prefix) const { return prefix + std::to_string(n); }
  /// Records (sender, sequence) calls, to check the order each sender's calls ran in.
  void note(int sender, int seq) { journal.emplace_back(sender, seq); }
  std::vector<std::pair<int, int>> notes() const { return journal; }
  /// Appends a line to `path`: a trace that outlives the process.
  void append(std::string path, int value) { std::ofstream{path, std::ios::app} << value << '\n'; }
  /// Not among the methods TROUPE_ACTOR lists: no other process may call it.
  int unlisted() { return 0; }
  int n;
  int made_in;
  std::vector<std::pair<int, int>> journal;
};
TROUPE_ACTOR(tally, int, &tally::add, &tally::get, &tally::pid, &tally::slot, &tally::slot_made_in,
             &tally::slow, &tally::fail, &tally::describe, &tally::note, &tally::notes,
             &tally::append);

} // namespace troupe::testing
