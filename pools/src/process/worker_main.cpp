// The worker process of a process pool: takes batches from its request queue, runs them, and
// answers on its reply queue, beating its heart all the while.
#include "process/chunk_runner.hpp"
#include "process/process_link.hpp"
#include "process/relay_client.hpp"
#include "process/worker_spec.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/queues/queue.hpp"
#include "troupe/queues/shm_segment.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <stop_token>
#include <thread>
#include <vector>

namespace troupe::detail {

namespace {

using namespace std::chrono_literals;

constexpr auto beat_interval = 20ms;
/// How often a placed actor's idle loop looks whether its process is ending.
constexpr auto stop_check_interval = 100ms;

class placed_actors;

/// Sends a batch of replies. One too large to travel has each result that makes it so replaced
/// by an error saying why, and goes again: the item fails, the worker goes on.
void send_replies(queue<reply_batch>& replies, reply_batch& batch, segment_store& results) {
  results.hold_for_queue();
  try {
    replies.put(batch);
    return;
  } catch (const capacity_error& e) {
    const auto limit = replies.max_message_bytes();
    for (auto& reply : batch.chunks) {
      const auto bytes = reply.outcomes.size();
      if (limit != 0 && bytes < limit / 2)
        continue;
      reply.why = {type_name<capacity_error>(),
                   "results of " + readable_bytes(bytes) + " cannot travel back: " +
                     (limit != 0 ? "the pool's max_message_bytes is " + readable_bytes(limit)
                                 : std::string{e.what()})};
      reply.outcomes.clear();
    }
  }
  replies.put(batch);
}

/// Runs a batch's chunks; replies go back together, but none waits behind a slow chunk for more
/// than a moment.
void serve(const request_batch& batch, chunk_runner& runner, queue<reply_batch>& replies,
           segment_store& arguments) {
  reply_batch out;
  std::optional<segment_store> results;
  auto oldest = std::chrono::steady_clock::now();
  const auto flush = [&] {
    send_replies(replies, out, *results);
    out.chunks.clear();
    results.reset();
  };
  for (const auto& request : batch.chunks) {
    if (out.chunks.empty()) {
      oldest = std::chrono::steady_clock::now();
      results.emplace(replies.tensor_segments());
    }
    // Tensors in arguments come from the request queue's segments; large results go into the
    // reply queue's.
    crossing_store crossing{*results, arguments};
    tensor_store_scope scope{crossing};
    out.chunks.push_back(runner.run(request));
    if (std::chrono::steady_clock::now() - oldest > 1ms)
      flush();
  }
  if (!out.chunks.empty())
    flush();
}

/// Takes batches from the queues `stem`-req until that queue closes (or `stop` is asked), runs
/// them, answers on `stem`-rep, and beats in `heartbeat` all the while: a worker process's loop,
/// and that of each actor placed in one. Batches that place actors start them (`actors`).
void serve_queues(const std::string& stem, const std::string& heartbeat_name, std::size_t index,
                  const std::string& initializer, std::stop_token stop, placed_actors* actors);

/// The actors placed in this worker process, each served on a thread of its own through its
/// own queues, with itself as that thread's context. They end with the process's own loop.
class placed_actors {
public:
  explicit placed_actors(std::size_t index) : index_(index) {}
  void start(const actor_channel& channel) {
    threads_.emplace_back([index = index_, channel](std::stop_token stop) {
      try {
        serve_queues(channel.queues, channel.heartbeat, index, "", stop, nullptr);
      } catch (const std::exception& e) {
        // Its host sees the heart stop and decides what becomes of the actor.
        std::cerr << "troupe: an actor in worker " << index << " cannot go on: " << e.what()
                  << std::endl;
      }
    });
  }

private:
  std::size_t index_;
  std::vector<std::jthread> threads_; // stopped and joined when this goes
};

void serve_queues(const std::string& stem, const std::string& heartbeat_name, std::size_t index,
                  const std::string& initializer, std::stop_token stop, placed_actors* actors) {
  auto requests = queue<request_batch>::open(stem + "-req");
  auto replies = queue<reply_batch>::open(stem + "-rep");
  auto heartbeat = shm_segment::open(heartbeat_name);
  serve_relays_through(stem); // handles this thread's calls use relay through this channel
  // The first beat, before any work: the pool then knows this worker has started, so from now
  // on a still heart means frozen, however late the beating thread first gets to run.
  beat_of(heartbeat).fetch_add(1);
  // Joined (not detached) before `heartbeat` unmaps: a beat into unmapped memory at exit is a
  // SIGSEGV.
  std::jthread beating([&beat = beat_of(heartbeat)](std::stop_token beats) {
    while (!beats.stop_requested()) {
      beat.fetch_add(1);
      std::this_thread::sleep_for(beat_interval);
    }
  });
  // After the first beat: an initializer may take its time (loading a model, say).
  chunk_runner runner{index,
                      (actors != nullptr ? "worker " : "actor in worker ") + std::to_string(index),
                      initializer};
  segment_store arguments = requests.tensor_segments();
  while (!stop.stop_requested()) {
    request_batch batch;
    try {
      // A loop that may be asked to stop looks up now and then; the process's own waits.
      batch = stop.stop_possible() ? requests.get(stop_check_interval) : requests.get();
    } catch (const queue_closed&) {
      return;
    } catch (const timeout_error&) {
      continue;
    } catch (const serialization_error&) {
      continue; // garbage in the queue: that batch is lost to it, the worker goes on
    }
    if (batch.context)
      runner.install(*batch.context);
    if (actors != nullptr)
      for (const auto& channel : batch.actors)
        actors->start(channel);
    serve(batch, runner, replies, arguments);
  }
}

} // namespace

int run_worker_process(const std::string& value) {
  const auto spec = worker_spec::parse(value);
  if (!spec) {
    std::cerr << "troupe: malformed --troupe-worker value '" << value << "'\n";
    return 2;
  }
  // Die with the pool's process: no orphans, whatever way it ends.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != spec->parent)
    return 3;
  try {
    install_relays(spec->queues);
    placed_actors actors{spec->index};
    serve_queues(spec->queues, spec->heartbeat, spec->index, spec->initializer, {}, &actors);
    return 0;
  } catch (const std::exception& e) {
    // The pool sees the exit and fails (or retries) what this worker held.
    std::cerr << "troupe: worker " << spec->index << " cannot go on: " << e.what() << std::endl;
    return 4;
  }
}

} // namespace troupe::detail
