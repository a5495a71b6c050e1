#include "process/worker_channel.hpp"
#include "troupe/actors/detail/readable.hpp"

#include <unistd.h>

#include <atomic>
#include <random>

namespace troupe::detail {

namespace {

std::string fresh_stem() {
  static std::atomic<std::uint64_t> counter{0};
  return "pool-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" +
         std::to_string(std::random_device{}() % 1000000);
}

/// The rings go with this process however it ends (collect_orphan_segments).
queue_options rings(const process_settings& settings) {
  return {.max_messages = 256,
          .max_bytes = 64 << 20,
          .max_message_bytes = settings.max_message_bytes,
          .owned_by_creator = true};
}

} // namespace

worker_channel::worker_channel(const process_settings& settings)
  : stem_(fresh_stem()), requests_(queue<request_batch>::create(stem_ + "-req", rings(settings))),
    replies_(queue<reply_batch>::create(stem_ + "-rep", rings(settings))),
    answers_(std::make_shared<queue<reply_batch>>(
      queue<reply_batch>::create(stem_ + "-ans", rings(settings)))),
    heartbeat_(shm_segment::create(64)) {
  beat_of(heartbeat_).store(0);
  started_ = last_beat_change_ = std::chrono::steady_clock::now();
}

worker_channel::~worker_channel() {
  close_requests(); // the worker's relayed calls still waiting fail there
  requests_.unlink();
  replies_.unlink();
  answers_->unlink();
}

std::optional<reply_batch> worker_channel::receive(std::chrono::milliseconds wait) {
  try {
    return replies_.get(wait);
  } catch (const timeout_error&) {
    return std::nullopt;
  }
}

std::string worker_channel::stillness(const process_settings& settings) {
  const auto now = std::chrono::steady_clock::now();
  const auto beat = beat_of(heartbeat_).load();
  if (beat != last_beat_) {
    last_beat_ = beat;
    last_beat_change_ = now;
    return {};
  }
  // The heartbeat clock starts with the first beat: a program slow to initialise is starting,
  // not frozen.
  if (last_beat_ == 0)
    return now - started_ < settings.startup_timeout
             ? std::string{}
             : "did not start within the startup_timeout of " + readable(settings.startup_timeout);
  return now - last_beat_change_ < settings.heartbeat_timeout
           ? std::string{}
           : "stopped answering (no heartbeat for the heartbeat_timeout of " +
               readable(settings.heartbeat_timeout) + ")";
}

} // namespace troupe::detail
