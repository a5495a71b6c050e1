#include "process_link.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/task.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <random>
#include <sstream>
#include <thread>

extern char** environ;

namespace troupe::detail {

namespace {

using namespace std::chrono_literals;

constexpr auto beat_interval = 20ms;

std::atomic<std::uint64_t>& beat_of(const shm_segment& segment) {
  return *reinterpret_cast<std::atomic<std::uint64_t>*>(segment.data());
}

/// Installed at static initialisation: a program that starts process pools serves as their
/// worker when run with --troupe-worker=...
const bool worker_main_installed = (install_worker_main(&run_worker_process), true);

constexpr std::string_view pool_queue_prefix = "troupe.q.pool-";

} // namespace

std::size_t collect_orphan_pool_queues() {
  std::size_t freed = 0;
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr)
    return 0;
  while (dirent* entry = readdir(dir)) {
    const std::string_view name{entry->d_name};
    if (!name.starts_with(pool_queue_prefix))
      continue;
    const auto pid = std::atol(std::string{name.substr(pool_queue_prefix.size())}.c_str());
    // A pool's queues are named after its process; once that is gone, nobody can use them.
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH &&
        shm_unlink(("/" + std::string{name}).c_str()) == 0)
      ++freed;
  }
  closedir(dir);
  return freed;
}

process_link::process_link(std::size_t index, const process_settings& settings)
  : settings_(settings) {
  (void)worker_main_installed;
  collect_orphan_pool_queues(); // of pools whose process was killed
  static std::atomic<std::uint64_t> counter{0};
  name_ = "pool-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" +
          std::to_string(std::random_device{}() % 1000000);
  requests_.emplace(queue<request_batch>::create(name_ + "-req", {.max_messages = 256,
                                                                  .max_bytes = 64 << 20}));
  replies_.emplace(queue<reply_batch>::create(name_ + "-rep", {.max_messages = 256,
                                                               .max_bytes = 64 << 20}));
  heartbeat_.emplace(shm_segment::create(64));
  beat_of(*heartbeat_).store(0);

  const std::string flag = "--troupe-worker=" + name_ + "," + heartbeat_->name() + "," +
                           std::to_string(getpid()) + "," + std::to_string(index) + "," +
                           settings.initializer;
  std::vector<std::string> args{"troupe-worker", flag};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  // The worker gets stdin, stdout and stderr, and none of the pool process's other files (its
  // sockets, pipes, locks): it reaches the pool only through its queues.
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addclosefrom_np(&files, 3);
  const int spawned = posix_spawn(&pid_, "/proc/self/exe", &files, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  if (spawned != 0)
    throw state_error("cannot start worker process " + std::to_string(index));
  label_ = "worker " + std::to_string(index) + " (pid " + std::to_string(pid_) + ")";
  last_beat_change_ = std::chrono::steady_clock::now();
  if (!settings.context_factory.empty() || !settings.context_type.empty()) {
    request_batch setup;
    setup.context = context_setup{settings.context_factory, settings.context_type,
                                  settings.context_values.empty() ? std::vector<std::byte>{}
                                                                  : settings.context_values.at(index),
                                  index};
    requests_->put(setup);
  }
}

process_link::~process_link() {
  // Closing the request queue lets the worker drain and exit; a stuck one is killed.
  requests_->close();
  const auto until = std::chrono::steady_clock::now() + 1s;
  while (!exited_ && std::chrono::steady_clock::now() < until) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_)
      exited_ = true;
    else
      std::this_thread::sleep_for(1ms);
  }
  kill();
  requests_->unlink();
  replies_->unlink();
}

void process_link::send(const request_batch& requests) { requests_->put(requests); }

std::optional<reply_batch> process_link::receive(std::chrono::milliseconds wait) {
  try {
    return replies_->get(wait);
  } catch (const timeout_error&) {
    return std::nullopt;
  }
}

bool process_link::alive() {
  if (exited_)
    return false;
  if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
    exited_ = true;
    return false;
  }
  const auto now = std::chrono::steady_clock::now();
  const auto beat = beat_of(*heartbeat_).load();
  if (beat != last_beat_) {
    last_beat_ = beat;
    last_beat_change_ = now;
    return true;
  }
  return now - last_beat_change_ < settings_.heartbeat_timeout;
}

void process_link::kill() {
  if (exited_)
    return;
  ::kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  exited_ = true;
}

int run_worker_process(const std::string& spec) {
  // spec: queue name, heartbeat segment, parent pid, worker index, initializer (maybe empty)
  std::vector<std::string> fields;
  std::stringstream in{spec};
  for (std::string field; std::getline(in, field, ',');)
    fields.push_back(field);
  if (fields.size() < 4)
    return 2;
  fields.resize(5);
  const auto parent = static_cast<pid_t>(std::stol(fields[2]));
  // Die with the pool's process: no orphans, whatever way it ends.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent)
    return 3;

  auto requests = queue<request_batch>::open(fields[0] + "-req");
  auto replies = queue<reply_batch>::open(fields[0] + "-rep");
  auto heartbeat = shm_segment::open(fields[1]);
  // Joined (not detached) before `heartbeat` unmaps: a beat into unmapped memory at exit is a
  // SIGSEGV.
  std::jthread beating([&beat = beat_of(heartbeat)](std::stop_token stop) {
    while (!stop.stop_requested()) {
      beat.fetch_add(1);
      std::this_thread::sleep_for(beat_interval);
    }
  });
  chunk_runner runner{"worker " + fields[3], fields[4]};

  // Tensors in arguments come from the request queue's segments; large results go into the
  // reply queue's.
  segment_store arguments{requests.ring()};
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
    // Replies go back together, but none waits behind a slow chunk for more than a moment.
    reply_batch replies_out;
    std::optional<segment_store> results;
    const auto flush = [&] {
      results->hold_for_queue();
      replies.put(replies_out);
      replies_out.chunks.clear();
      results.reset();
    };
    auto oldest = std::chrono::steady_clock::now();
    for (const auto& request : batch.chunks) {
      if (replies_out.chunks.empty()) {
        oldest = std::chrono::steady_clock::now();
        results.emplace(replies.ring());
      }
      crossing_store crossing{*results, arguments};
      tensor_store_scope scope{crossing};
      replies_out.chunks.push_back(runner.run(request));
      if (std::chrono::steady_clock::now() - oldest > 1ms)
        flush();
    }
    if (!replies_out.chunks.empty())
      flush();
  }
}

chunk_runner::chunk_runner(std::string label, const std::string& initializer)
  : label_(std::move(label)) {
  // An initializer that throws makes every chunk fail with its exception, as in thread pools.
  if (initializer.empty())
    return;
  const auto* init = task_registry::instance().find(initializer);
  try {
    if (init == nullptr)
      throw serialization_error("no task named '" + initializer + "' to initialize workers");
    const auto outcomes =
      deserialize<chunk_outcomes<void>>((*init)(encode_calls(std::vector<std::tuple<>>(1))));
    if (!outcomes.second.empty())
      init_failure_ = {outcomes.second[0].type, outcomes.second[0].message};
  } catch (...) {
    init_failure_ = describe_current_exception();
  }
}

void chunk_runner::install(const context_setup& setup) {
  try {
    if (!setup.factory.empty()) {
      const auto* make = task_registry::instance().find_context_factory(setup.factory);
      if (make == nullptr)
        throw serialization_error("no context factory named '" + setup.factory + "'");
      context_ = (*make)(setup.index);
    } else {
      const auto* decode = task_registry::instance().find_context_type(setup.type);
      if (decode == nullptr)
        throw serialization_error("no context type " + setup.type + " in this program");
      context_ = (*decode)(setup.value);
    }
  } catch (...) {
    context_failure_ = describe_current_exception();
  }
}

chunk_reply chunk_runner::run(const chunk_request& request) {
  chunk_reply reply;
  reply.id = request.id;
  const auto failed = [&](const std::pair<std::string, std::string>& why) {
    std::tie(reply.error_type, reply.error) = why;
    return reply;
  };
  if (!init_failure_.first.empty())
    return failed(init_failure_);
  try {
    if (request.with_context) {
      if (!context_failure_.first.empty())
        return failed(context_failure_);
      if (!context_)
        throw serialization_error(label_ + " has no context for context task '" + request.task + "'");
      const auto* task = task_registry::instance().find_context_task(request.task);
      if (task == nullptr)
        throw serialization_error("no context task named '" + request.task + "' in " + label_);
      reply.outcomes = (*task)(context_.get(), request.calls);
    } else {
      const auto* task = task_registry::instance().find(request.task);
      if (task == nullptr)
        throw serialization_error("no task named '" + request.task + "' in " + label_ +
                                  " (is it registered with TROUPE_TASK, in the same program "
                                  "version?)");
      reply.outcomes = (*task)(request.calls);
    }
  } catch (...) {
    reply.error = describe_current_exception().second;
  }
  return reply;
}

} // namespace troupe::detail
