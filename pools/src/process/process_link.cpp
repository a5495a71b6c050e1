#include "process/process_link.hpp"

#include "process/worker_spec.hpp"

#include "troupe/actors/detail/worker_mains.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/actors/runtime.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

extern char** environ;

namespace troupe::detail {

namespace {

using namespace std::chrono_literals;

/// Installed at static initialisation: a program that starts process pools serves as their
/// worker when run with --troupe-worker=...
const bool worker_main_installed = (install_worker_main(&run_worker_process), true);

std::string describe_exit(int status) {
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

} // namespace

process_link::process_link(std::size_t index, std::shared_ptr<const process_settings> settings)
  : channel_link(*settings), settings_(std::move(settings)) {
  (void)worker_main_installed;
  const worker_spec spec{channel_.stem(), channel_.heartbeat_name(), getpid(), index,
                         settings_->initializer};
  std::string program = "troupe-worker", flag = "--troupe-worker=" + spec.to_flag_value();
  char* argv[] = {program.data(), flag.data(), nullptr};
  // The worker gets stdin, stdout and stderr, and none of the pool process's other files (its
  // sockets, pipes, locks): it reaches the pool only through its queues.
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addclosefrom_np(&files, 3);
  const int spawned = posix_spawn(&pid_, "/proc/self/exe", &files, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&files);
  if (spawned != 0)
    throw state_error("cannot start worker process " + std::to_string(index) + ": " +
                      std::strerror(spawned));
  label_ = "worker " + std::to_string(index) + " (pid " + std::to_string(pid_) + ")";
  if (!settings_->context_factory.empty() || !settings_->context_type.empty()) {
    request_batch setup;
    setup.context =
      context_setup{settings_->context_factory, settings_->context_type,
                    settings_->context_values.empty() ? std::vector<std::byte>{}
                                                      : settings_->context_values.at(index),
                    index};
    if (!send(setup))
      std::rethrow_exception(loss().with(" before it took its context").exception());
  }
}

process_link::~process_link() {
  // Closing the request queue lets the worker drain and exit; a stuck one is killed.
  channel_.close_requests();
  const auto until = std::chrono::steady_clock::now() + 1s;
  while (!exited_ && std::chrono::steady_clock::now() < until) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_)
      exited_ = true;
    else
      std::this_thread::sleep_for(1ms);
  }
  kill(); // the channel's queues go after this
}

bool process_link::alive() {
  if (!lost_reason_.empty())
    return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    exited_ = true;
    return lost(describe_exit(status));
  }
  auto still = channel_.stillness(*settings_);
  return still.empty() || lost(std::move(still));
}

void process_link::kill() {
  if (exited_)
    return;
  ::kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  exited_ = true;
  if (lost_reason_.empty())
    lost_reason_ = "was stopped by the pool";
}

} // namespace troupe::detail
