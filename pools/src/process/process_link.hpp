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

class process_link final : public channel_link {
public:
  /// Starts the worker process of slot `index` (and hands it its context, in context pools).
  process_link(std::size_t index, std::shared_ptr<const process_settings> settings);
  /// Lets the worker go (it finishes what it has), then makes sure it is gone.
  ~process_link() override;
  process_link(const process_link&) = delete;
  process_link& operator=(const process_link&) = delete;

  bool alive() override;
  void kill() override;
  pid_t pid() const noexcept { return pid_; }

private:
  std::shared_ptr<const process_settings> settings_;
  pid_t pid_ = -1;
  bool exited_ = false;
};

/// The worker process's side (installed as runtime's worker main).
int run_worker_process(const std::string& spec);

} // namespace troupe::detail
