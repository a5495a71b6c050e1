// What a pool shares with a worker it serves through shared memory: a request queue, a reply
// queue, a heartbeat segment, and a queue for the answers to the calls the worker relays to
// actors of this process (relay_host.cpp), made here and opened there by name. The worker is a
// process (process_link) or an actor placed in one (slot_link); either way its heart is watched the
// same.
#pragma once

#include "process/worker_link.hpp"

#include "troupe/queues/queue.hpp"
#include "troupe/queues/shm_segment.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace troupe::detail {

/// The count a worker's heart beats up, at the start of its heartbeat segment.
inline std::atomic<std::uint64_t>& beat_of(const shm_segment& segment) {
  return *reinterpret_cast<std::atomic<std::uint64_t>*>(segment.data());
}

class worker_channel {
public:
  /// Makes the queues (bounded by the settings' max_message_bytes) and the heartbeat.
  explicit worker_channel(const process_settings& settings);
  /// Closes the request queue and removes the queues (the heartbeat goes with its segment).
  ~worker_channel();
  worker_channel(const worker_channel&) = delete;
  worker_channel& operator=(const worker_channel&) = delete;

  /// The stem of the queues' names (-req, -rep) and the heartbeat's name, for the worker.
  const std::string& stem() const noexcept { return stem_; }
  std::string heartbeat_name() const { return heartbeat_.name(); }

  /// Sends a batch, waiting for room while `alive()` holds; false if it stops holding first.
  template <class Alive>
  bool send(const request_batch& requests, Alive&& alive) {
    return requests_.put_while(requests, std::forward<Alive>(alive));
  }
  std::optional<reply_batch> receive(std::chrono::milliseconds wait);
  /// Lets the worker drain what it has and end: it takes no more requests, and its relay
  /// reader (relay_client.cpp) ends at once rather than at its next look.
  void close_requests() {
    requests_.close();
    answers_->close();
  }

  /// Empty while the worker's heart beats; else why it is taken for lost: no first beat within
  /// startup_timeout (the clock starting here), or none since for heartbeat_timeout.
  std::string stillness(const process_settings& settings);

  /// Where the answers to the worker's relayed calls go (shared: a call may end after this).
  const std::shared_ptr<queue<reply_batch>>& relay_answers() const noexcept { return answers_; }

  std::optional<segment_store> request_segments() { return requests_.tensor_segments(); }
  std::optional<segment_store> reply_segments() { return replies_.tensor_segments(); }
  /// See process_link::spin_while_receiving.
  void spin_while_receiving(bool on) noexcept { replies_.spin_while_waiting(on); }

private:
  std::string stem_;
  queue<request_batch> requests_;
  queue<reply_batch> replies_;
  std::shared_ptr<queue<reply_batch>> answers_;
  shm_segment heartbeat_;
  std::uint64_t last_beat_ = 0; // 0: it has not beaten yet, so it is still starting
  std::chrono::steady_clock::time_point started_, last_beat_change_;
};

/// A worker reached through a channel of this process's making - a process (process_link), an
/// actor placed in one (slot_link) - as the pool sees it: what both are; each says when its
/// worker is lost (alive(), kill()).
class channel_link : public worker_link {
public:
  explicit channel_link(const process_settings& settings) : channel_(settings) {}

  bool send(const request_batch& requests) override {
    return channel_.send(requests, [this] { return alive(); });
  }
  std::optional<reply_batch> receive(std::chrono::milliseconds wait) override {
    return channel_.receive(wait);
  }
  std::string lost_reason() const override { return lost_reason_; }
  const std::string& label() const noexcept override { return label_; }
  std::optional<segment_store> request_segments() override { return channel_.request_segments(); }
  std::optional<segment_store> reply_segments() override { return channel_.reply_segments(); }
  std::shared_ptr<queue<reply_batch>> relay_answers() override { return channel_.relay_answers(); }
  /// Whether receive() watches the reply queue for a moment before it sleeps (see
  /// queue::spin_while_waiting): worth it only where a core is free to watch.
  void spin_while_receiving(bool on) noexcept { channel_.spin_while_receiving(on); }

protected:
  /// Records why the worker is lost; false, for alive() to return.
  bool lost(std::string why) {
    lost_reason_ = std::move(why);
    return false;
  }

  worker_channel channel_;
  std::string label_;
  std::string lost_reason_;
};

} // namespace troupe::detail
