// bench/actors: troupe's actors in this process against raw CAF's typed request/response, in
// one run, interleaved block by block.
//
//   build/bench/actors [rounds]
//
// Both actors add one to an int. troupe's actor has a thread of its own (so a slow call holds
// up nothing else); it is called from this thread and its result waited on (call().get()).
// CAF's is a typed actor, asked through a scoped_actor (request().receive()), twice: scheduled
// on the actor system's threads, as CAF runs actors by default, and detached, on a thread of its
// own as troupe's is. Then a burst of tells (fire and forget) to one troupe actor, timed until
// a call sent after them has its answer: every message handled, not only sent.
//
// Then an actor in a worker process (process_pool::spawn), called the same way, and one placed
// in a slot of the pool (troupe::in_slot: a thread of its own in the slot's worker process),
// against the floor any such call stands on: an int sent to a forked child over a pipe and sent
// back. And
// restarts: the actor's process is SIGKILLed and the time taken until a call is answered by
// its replacement. The last lines are `name value unit`, read by tooling.
#include "../tests/queues/process_support.hpp" // wait_for: a peer waited for with a deadline
#include "median.hpp"

#include "troupe/actors/actor.hpp"
#include "troupe/actors/runtime_state.hpp"
#include "troupe/pools/process_pool.hpp"

#include <caf/all.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;
using troupe::bench::median;

struct adder {
  int add(int k) { return k + 1; }
  void bump() { ++count; }
  long total() const { return count; }
  long count = 0;
};
TROUPE_ACTOR(adder, void, &adder::add);

struct restartable {
  int pid() const { return getpid(); }
};
TROUPE_ACTOR(restartable, void, &restartable::pid);

using caf_adder = caf::typed_actor<caf::replies_to<int>::with<int>>;

caf_adder::behavior_type caf_adder_impl() {
  return {[](int k) { return k + 1; }};
}

double since_us(clock_type::time_point start) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
}

/// Times `call(i)` for each i in [first, first + count), checking that it answers i + 1.
template <class Call>
void time_calls(int first, int count, std::vector<double>& us, Call&& call) {
  for (int i = first; i < first + count; ++i) {
    const auto start = clock_type::now();
    if (call(i) != i + 1)
      std::abort();
    us.push_back(since_us(start));
  }
}

/// A forked child that sends back every int it reads from a pipe: the floor of a call to
/// another process on this host (two wake-ups, two copies through the kernel).
class pipe_echo {
public:
  pipe_echo() {
    if (pipe(to_) != 0 || pipe(from_) != 0)
      std::abort();
    child_ = fork();
    if (child_ == 0) { // only read and write from here: the parent's threads are not copied
      close(to_[1]); // else the child would hold open the end whose closing ends it
      close(from_[0]);
      for (int v = 0; read(to_[0], &v, sizeof v) == sizeof v;) {
        ++v;
        if (write(from_[1], &v, sizeof v) != sizeof v)
          break;
      }
      _exit(0);
    }
    close(to_[0]);
    close(from_[1]);
  }
  ~pipe_echo() {
    close(to_[1]); // the child reads the end of its input and exits
    (void)troupe::testing::wait_for(child_, std::chrono::seconds{30});
    close(from_[0]);
  }
  int call(int v) {
    if (write(to_[1], &v, sizeof v) != sizeof v || read(from_[0], &v, sizeof v) != sizeof v)
      std::abort();
    return v;
  }

private:
  int to_[2]{}, from_[2]{};
  pid_t child_ = -1;
};

struct process_medians {
  double own_process_us, slot_us, pipe_us;
};

/// Calls to an actor in a worker process of its own, and to one in a slot of the pool, against
/// the pipe floor, interleaved block by block.
process_medians process_call_medians(troupe::process_pool& procs, int rounds) {
  const auto remote = procs.spawn<adder>();
  const auto placed = procs.spawn<adder>(troupe::in_slot{0});
  pipe_echo echo;
  std::vector<double> actor_us, slot_us, pipe_us;
  constexpr int block = 100;
  for (int first = 0; first < rounds; first += block) {
    time_calls(first, block, actor_us, [&](int i) { return remote.call(&adder::add, i).get(); });
    time_calls(first, block, slot_us, [&](int i) { return placed.call(&adder::add, i).get(); });
    time_calls(first, block, pipe_us, [&](int i) { return echo.call(i); });
  }
  return {median(actor_us), median(slot_us), median(pipe_us)};
}

/// SIGKILL to the first call answered by the replacement, in ms, over `kills` kills.
double restart_median_ms(troupe::process_pool& procs, int kills) {
  const auto actor = procs.spawn<restartable>(
    {.name = "restartable", .restart = {.max_restarts = static_cast<std::size_t>(kills)}});
  std::vector<double> ms;
  for (int k = 0; k < kills; ++k) {
    const int pid = actor.call(&restartable::pid).get();
    const auto start = clock_type::now();
    ::kill(pid, SIGKILL);
    for (;;) {
      try {
        if (actor.call(&restartable::pid).get() != pid)
          break;
      } catch (const troupe::worker_lost&) {
      }
    }
    ms.push_back(since_us(start) / 1000.0);
  }
  return median(ms);
}

} // namespace

int main(int argc, char** argv) {
  troupe::runtime rt{argc, argv}; // a worker process of the actor never gets past this
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 20'000;
  auto& system = *troupe::runtime_state_of(rt).system;
  const auto ours = troupe::spawn<adder>(rt);
  const auto scheduled = system.spawn(caf_adder_impl);
  const auto detached = system.spawn<caf::detached>(caf_adder_impl);
  std::vector<double> troupe_us, caf_us, caf_detached_us;
  {
    caf::scoped_actor self{system};
    const auto ask = [&](const caf_adder& who, int k) {
      int answer = 0;
      self->request(who, caf::infinite, k)
        .receive([&](int v) { answer = v; }, [](caf::error&) { std::abort(); });
      return answer;
    };
    // Blocks of calls in turn, so that one contender's idle thread (troupe's actor watches its
    // mailbox for 30 us after a call) does not share the cores with another's calls.
    constexpr int block = 200;
    for (int first = 0; first < rounds; first += block) {
      time_calls(first, block, troupe_us, [&](int i) { return ours.call(&adder::add, i).get(); });
      std::this_thread::sleep_for(100us);
      time_calls(first, block, caf_us, [&](int i) { return ask(scheduled, i); });
      time_calls(first, block, caf_detached_us, [&](int i) { return ask(detached, i); });
    }
  }
  caf::anon_send_exit(scheduled, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(detached, caf::exit_reason::user_shutdown);

  constexpr long tells = 1'000'000;
  const auto counted =
    troupe::spawn<adder>(rt, troupe::actor_options{.name = "counted", .max_mailbox = 1 << 16});
  const auto start = clock_type::now();
  for (long i = 0; i < tells; ++i)
    counted.tell(&adder::bump);
  if (counted.call(&adder::total).get() != tells)
    std::abort();
  const double tell_s = std::chrono::duration<double>(clock_type::now() - start).count();

  troupe::process_pool procs{rt, {.workers = 1}};
  const auto [process_us, slot_us, pipe_us] = process_call_medians(procs, rounds / 4);
  const double restart_ms = restart_median_ms(procs, 10);

  const double ours_median = median(troupe_us);
  std::printf("actor_call_local_median_us %.2f us\n", ours_median);
  std::printf("caf_request_local_median_us %.2f us\n", median(caf_us));
  std::printf("caf_request_detached_median_us %.2f us\n", median(caf_detached_us));
  std::printf("actor_call_local_ratio_to_caf %.2f x\n", ours_median / median(caf_us));
  std::printf("actor_call_local_ratio_to_caf_detached %.2f x\n",
              ours_median / median(caf_detached_us));
  std::printf("actor_tell_msgs_per_s %.0f msgs/s\n", tells / tell_s);
  std::printf("actor_call_process_median_us %.2f us\n", process_us);
  std::printf("actor_call_slot_median_us %.2f us\n", slot_us);
  std::printf("pipe_roundtrip_process_median_us %.2f us\n", pipe_us);
  std::printf("actor_call_process_ratio_to_pipe %.2f x\n", process_us / pipe_us);
  std::printf("actor_restart_ms %.2f ms\n", restart_ms);
}
