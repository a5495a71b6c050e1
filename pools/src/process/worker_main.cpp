// The worker process of a process pool: takes batches from its request queue, runs them, and
// answers on its reply queue, beating its heart all the while.
#include "process/chunk_runner.hpp"
#include "process/process_link.hpp"
#include "process/worker_spec.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/queues/queue.hpp"
#include "troupe/queues/shm_segment.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <thread>

namespace troupe::detail {

namespace {

using namespace std::chrono_literals;

constexpr auto beat_interval = 20ms;

std::atomic<std::uint64_t>& beat_of(const shm_segment& segment) {
  return *reinterpret_cast<std::atomic<std::uint64_t>*>(segment.data());
}

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
      reply.error = "results of " + std::to_string(bytes) + " bytes cannot travel back: " +
                    (limit != 0 ? "the pool's max_message_bytes is " + std::to_string(limit)
                                : std::string{e.what()});
      reply.error_type = type_name<capacity_error>();
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
    auto requests = queue<request_batch>::open(spec->queues + "-req");
    auto replies = queue<reply_batch>::open(spec->queues + "-rep");
    auto heartbeat = shm_segment::open(spec->heartbeat);
    // The first beat, before any work: the pool then knows this worker has started, so from now
    // on a still heart means frozen, however late the beating thread first gets to run.
    beat_of(heartbeat).fetch_add(1);
    // Joined (not detached) before `heartbeat` unmaps: a beat into unmapped memory at exit is a
    // SIGSEGV.
    std::jthread beating([&beat = beat_of(heartbeat)](std::stop_token stop) {
      while (!stop.stop_requested()) {
        beat.fetch_add(1);
        std::this_thread::sleep_for(beat_interval);
      }
    });
    chunk_runner runner{spec->index, "worker " + std::to_string(spec->index), spec->initializer};
    segment_store arguments = requests.tensor_segments();
    for (;;) {
      request_batch batch;
      try {
        batch = requests.get();
      } catch (const queue_closed&) {
        return 0;
      } catch (const serialization_error&) {
        continue; // garbage in the queue: that batch is lost to it, the worker goes on
      }
      if (batch.context)
        runner.install(*batch.context);
      serve(batch, runner, replies, arguments);
    }
  } catch (const std::exception& e) {
    // The pool sees the exit and fails (or retries) what this worker held.
    std::cerr << "troupe: worker " << spec->index << " cannot go on: " << e.what() << std::endl;
    return 4;
  }
}

} // namespace troupe::detail
