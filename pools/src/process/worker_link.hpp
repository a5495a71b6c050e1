// A worker as the pool's slot actor sees it: a local process (process_link) or a node on another
// host (node_link); and the settings every process worker is started and watched with.
#pragma once

#include "process/worker_wire.hpp"

#include "troupe/queues/detail/segment_store.hpp"
#include "troupe/queues/queue.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace troupe::detail {

struct process_settings {
  std::string initializer; // registered task run once per worker, or empty
  std::size_t max_retries = 0; // re-runs of a chunk whose worker died
  std::chrono::milliseconds heartbeat_timeout{2000};
  std::chrono::milliseconds startup_timeout{60000}; // until a worker's first heartbeat
  std::size_t max_message_bytes = 0; // 0: no limit but memory
  std::size_t in_flight = 32; // chunks sent ahead to one worker
  std::size_t batch = 16; // chunks per message, at most
  // Context pools: a factory's name, or a context type and one encoded value per worker.
  std::string context_factory;
  std::string context_type;
  std::vector<std::vector<std::byte>> context_values;
};

class worker_link {
public:
  virtual ~worker_link() = default;
  /// Sends a batch, waiting for room as long as the worker lives; false if it is lost first.
  virtual bool send(const request_batch& requests) = 0;
  /// The next batch of replies, if one comes within `wait`. Throws serialization_error for
  /// bytes that do not decode.
  virtual std::optional<reply_batch> receive(std::chrono::milliseconds wait) = 0;
  /// False once the worker has gone, never started, or its heartbeat has been still too long.
  virtual bool alive() = 0;
  /// Why alive() turned false, as a phrase ("died: killed by signal 9") after the worker's name.
  virtual std::string lost_reason() const = 0;
  /// The loss as a failure: a worker_lost naming the worker and why; `.with(" while ...")` says
  /// what it took with it.
  failure loss() const { return failure::of<worker_lost>(label() + " " + lost_reason()); }
  /// Why the worker's owner ended it on purpose (a pool closed or terminated), or empty. Once
  /// set, the worker's end is a stop, not a loss: nothing restarts.
  virtual std::string ended_by_owner() const { return {}; }
  virtual void kill() = 0;
  virtual const std::string& label() const noexcept = 0;
  /// Calls `notify` once, when the worker is found lost (on whatever thread finds it): a node
  /// can be lost while nobody waits on it. Local workers are found lost only when asked.
  virtual void on_lost(std::function<void()> notify) { (void)notify; }
  /// The rings of a local worker's queues, for large tensors; null for a remote one.
  virtual std::optional<segment_store> request_segments() { return std::nullopt; }
  virtual std::optional<segment_store> reply_segments() { return std::nullopt; }
  /// Where the answers to the calls a local worker relays go; null for a remote one.
  virtual std::shared_ptr<queue<reply_batch>> relay_answers() { return nullptr; }
};

} // namespace troupe::detail
