#include "process/slot_link.hpp"

#include "troupe/actors/error.hpp"

#include <sys/wait.h>

#include <cstring>

namespace troupe::detail {

slot_link::slot_link(std::size_t slot, std::shared_ptr<const process_settings> settings,
                     std::shared_ptr<slot_placements> placements, context_setup actor,
                     std::string label)
  : channel_link(*settings), settings_(std::move(settings)), placements_(std::move(placements)),
    id_(placements_->add(slot, {channel_.stem(), channel_.heartbeat_name()})) {
  label_ = std::move(label);
  // The actor's object is the context of the thread that serves it: its first batch makes it.
  request_batch setup;
  setup.context = std::move(actor);
  if (!send(setup)) {
    placements_->remove(id_);
    std::rethrow_exception(loss().with(" before it was made").exception());
  }
}

slot_link::~slot_link() {
  channel_.close_requests();
  placements_->remove(id_);
}

std::string slot_link::process_gone() const {
  const pid_t pid = placements_->placed_in(id_);
  if (pid == 0)
    return {};
  // Said after "its worker process", as a process_link's reasons are.
  const auto process = "(pid " + std::to_string(pid) + ")";
  // WNOWAIT: the pool's driver reaps the process, and must still find it to.
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return process + " is gone"; // reaped already
  if (info.si_pid != pid)
    return {};
  if (info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED)
    return process + " was killed by signal " + std::to_string(info.si_status) + " (" +
           strsignal(info.si_status) + ")";
  return process + " exited with status " + std::to_string(info.si_status);
}

bool slot_link::alive() {
  if (!lost_reason_.empty())
    return false;
  if (auto gone = process_gone(); !gone.empty())
    return lost(std::move(gone));
  auto still = channel_.stillness(*settings_);
  return still.empty() || lost(std::move(still));
}

std::string slot_link::ended_by_owner() const { return placements_->closed_reason(); }

void slot_link::kill() {
  if (lost_reason_.empty())
    lost_reason_ = "was stopped by its host";
  channel_.close_requests();
}

} // namespace troupe::detail
