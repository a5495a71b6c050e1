// One worker process of a process pool, seen from the pool's side: started by re-executing this
// program, fed chunks through a shared-memory queue, answering on another, and beating a heart
// the pool watches so a frozen process is noticed as surely as a dead one.
#pragma once

#include "process/worker_channel.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace troupe::detail {

class process_link final : public worker_link {
public:
  /// Starts the worker process of slot `index` (and hands it its context, in context pools).
  process_link(std::size_t index, std::shared_ptr<const process_settings> settings);
  /// Lets the worker go (it finishes what it has), then makes sure it is gone.
  ~process_link() override;
  process_link(const process_link&) = delete;
  process_link& operator=(const process_link&) = delete;

  bool send(const request_batch& requests) override;
  std::optional<reply_batch> receive(std::chrono::milliseconds wait) override;
  bool alive() override;
  std::string lost_reason() const override { return lost_reason_; }
  void kill() override;
  const std::string& label() const noexcept override { return label_; }
  std::optional<segment_store> request_segments() override { return channel_.request_segments(); }
  std::optional<segment_store> reply_segments() override { return channel_.reply_segments(); }
  std::shared_ptr<queue<reply_batch>> relay_answers() override { return channel_.relay_answers(); }
  pid_t pid() const noexcept { return pid_; }
  /// Whether receive() watches the reply queue for a moment before it sleeps (see
  /// queue::spin_while_waiting): worth it only where a core is free to watch.
  void spin_while_receiving(bool on) noexcept { channel_.spin_while_receiving(on); }

private:
  bool lost(std::string why);

  std::string label_;
  std::shared_ptr<const process_settings> settings_;
  worker_channel channel_;
  pid_t pid_ = -1;
  bool exited_ = false;
  std::string lost_reason_;
};

/// The worker process's side (installed as runtime's worker main).
int run_worker_process(const std::string& spec);

} // namespace troupe::detail
