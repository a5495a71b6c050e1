// An actor that survives its worker's death: a ledger kept in a worker process of its own,
// whose process is SIGKILLed mid-run (as a crash or the kernel's OOM killer would). troupe makes
// the actor again in a new process from the same constructor arguments, tells on_restart, and
// the calls go on; one marked idempotent that met the dead process is sent again.
//
//   ./build/examples/surviving_actor
#include <troupe/troupe.hpp>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>

using namespace std::chrono_literals;

// snippet-begin: actor
/// The actor: any class; it runs one call at a time, so it needs no lock.
struct ledger {
  explicit ledger(std::string book) : book(std::move(book)) {}
  int record(int amount) { return total += amount; }
  int pid() const { return static_cast<int>(::getpid()); }
  std::string book;
  int total = 0;
};
// What another process needs to make it: its constructor's parameter, the methods to call.
TROUPE_ACTOR(ledger, std::string, &ledger::record, &ledger::pid);
// snippet-end: actor

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv}; // the actor's worker process never gets past this line
  troupe::process_pool procs{rt, {.workers = 1}};
  // snippet-begin: spawn
  std::atomic<int> restarts{0};
  auto book = procs.spawn<ledger>(
    {.name = "ledger",
     .restart = {.max_restarts = 3, .max_call_retries = 2}, // 3 deaths a minute at most
     .on_restart =
       [&restarts](const troupe::actor_restart& r) {
         ++restarts;
         std::printf("%s made again (%zu): %s\n", r.actor.c_str(), r.restarts, r.cause.c_str());
       }},
    std::string{"sales"});
  // snippet-end: spawn

  // snippet-begin: crash
  const int first = book.call(&ledger::pid).get();
  book.call(&ledger::record, 40).get();
  ::kill(first, SIGKILL); // the worker dies with the actor in it
  // The next call reaches a new process; idempotent: sent again should it meet the dead one.
  const int second = book.call(troupe::idempotent, &ledger::pid).get(30s);
  const int total = book.call(&ledger::record, 2).get(30s); // a new ledger: 2, not 42
  // snippet-end: crash
  std::printf("the ledger lived in process %d, then in %d; after the restart it holds %d\n", first,
              second, total);
  return second != first && restarts == 1 && total == 2 ? 0 : 1;
}
