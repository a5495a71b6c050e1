// One worker process of a process pool, seen from the pool's side: started by re-executing this
// program, fed chunks through a shared-memory queue, answering on another, and beating a heart
// the pool watches so a frozen process is noticed as surely as a dead one.
#pragma once

#include "troupe/queues/queue.hpp"
#include "troupe/queues/shm_segment.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <functional>
#include <memory>

namespace troupe::detail {

struct chunk_request {
  std::uint64_t id = 0;
  std::string task;
  bool with_context = false; // call as task(worker's context, args...)
  std::vector<std::byte> calls;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(id, task, with_context, calls);
  }
};

/// How a context pool's worker gets its context: made by a registered factory from the worker's
/// index, or decoded from a value of a registered context type.
struct context_setup {
  std::string factory;
  std::string type;
  std::vector<std::byte> value;
  std::uint64_t index = 0; // the worker's index, the factory's argument
  template <class Archive>
  void serialize(Archive& ar) {
    ar(factory, type, value, index);
  }
};

struct chunk_reply {
  std::uint64_t id = 0;
  // Non-empty: the chunk could not be run at all. With error_type, because the worker's
  // initializer threw (a task_error); without, because of its bytes or its task's name.
  std::string error, error_type;
  std::vector<std::byte> outcomes;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(id, error, error_type, outcomes);
  }
};

/// Several chunks travel in one message each way: the per-message costs (a lock, a wake-up)
/// are paid once per batch, whatever the chunk size.
struct request_batch {
  std::vector<chunk_request> chunks;
  std::optional<context_setup> context; // in a worker's first batch, for context pools
  template <class Archive>
  void serialize(Archive& ar) {
    ar(chunks, context);
  }
};

struct reply_batch {
  std::vector<chunk_reply> chunks;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(chunks);
  }
};

struct process_settings {
  std::string initializer;                   // registered task run once per worker, or empty
  std::size_t max_retries = 0;               // re-runs of a chunk whose worker died
  std::chrono::milliseconds heartbeat_timeout{2000};
  std::size_t in_flight = 32;                // chunks sent ahead to one worker
  std::size_t batch = 16;                    // chunks per message, at most
  // Context pools: a factory's name, or a context type and one encoded value per worker.
  std::string context_factory;
  std::string context_type;
  std::vector<std::vector<std::byte>> context_values;
};

/// A worker as the pool's slot actor sees it: a local process (process_link) or a node on
/// another host (tcp_link).
class worker_link {
public:
  virtual ~worker_link() = default;
  virtual void send(const request_batch& requests) = 0;
  virtual std::optional<reply_batch> receive(std::chrono::milliseconds wait) = 0;
  /// False once the worker has gone or its heartbeat has been still for the timeout.
  virtual bool alive() = 0;
  virtual void kill() = 0;
  virtual const std::string& label() const noexcept = 0;
  /// The rings of a local worker's queues, for large tensors; null for a remote one.
  virtual byte_queue* request_ring() { return nullptr; }
  virtual byte_queue* reply_ring() { return nullptr; }
};

class process_link final : public worker_link {
public:
  /// Starts the worker process of slot `index` (and hands it its context, in context pools).
  process_link(std::size_t index, const process_settings& settings);
  /// Lets the worker go (it finishes what it has), then makes sure it is gone.
  ~process_link();
  process_link(const process_link&) = delete;
  process_link& operator=(const process_link&) = delete;

  void send(const request_batch& requests) override;
  std::optional<reply_batch> receive(std::chrono::milliseconds wait) override;
  bool alive() override;
  void kill() override;
  const std::string& label() const noexcept override { return label_; }
  byte_queue* request_ring() override { return &requests_->ring(); }
  byte_queue* reply_ring() override { return &replies_->ring(); }

private:
  std::string label_;
  process_settings settings_;
  std::string name_; // of its queues
  std::optional<queue<request_batch>> requests_;
  std::optional<queue<reply_batch>> replies_;
  std::optional<shm_segment> heartbeat_;
  pid_t pid_ = -1;
  bool exited_ = false;
  std::uint64_t last_beat_ = 0;
  std::chrono::steady_clock::time_point last_beat_change_;
};

/// Unlinks the queues of pools whose process is gone (killed before it could clean up).
std::size_t collect_orphan_pool_queues();

/// The worker process's side (installed as runtime's worker main).
int run_worker_process(const std::string& spec);

/// What a worker does with requests, wherever they come from (its queues, or a socket): runs
/// the initializer once, keeps the context, and runs chunks with the registered tasks.
class chunk_runner {
public:
  chunk_runner(std::string label, const std::string& initializer);
  void install(const context_setup& setup);
  chunk_reply run(const chunk_request& request);

private:
  std::string label_;
  std::pair<std::string, std::string> init_failure_, context_failure_; // type, message
  std::shared_ptr<void> context_;
};

} // namespace troupe::detail
