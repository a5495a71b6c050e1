#include "troupe/actors/detail/worker_mains.hpp"
#include "troupe/actors/runtime_state.hpp"

#include "troupe/actors/error.hpp"

#include "transport/tls_context.hpp"
#include "transport/transport.hpp"

#include <caf/io/middleman.hpp>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>

namespace troupe {

namespace detail {

void service_registry::add(service* s) {
  std::lock_guard guard{mutex_};
  if (shut_down_)
    throw state_error("the runtime is shutting down; no new pool or service can attach to it");
  services_.push_back(s);
}

bool service_registry::remove(service* s) {
  std::lock_guard guard{mutex_};
  auto i = std::find(services_.begin(), services_.end(), s);
  if (i == services_.end())
    return false;
  services_.erase(i);
  return true;
}

void service_registry::shutdown_all() noexcept {
  // Held throughout, so a service's own destructor running concurrently waits here and then
  // finds itself already removed.
  std::lock_guard guard{mutex_};
  shut_down_ = true;
  for (auto* s : services_)
    s->shutdown();
  services_.clear();
}

runtime_state::runtime_state(int threads) : scheduler_threads(threads) {
  config.set("scheduler.max-threads", static_cast<std::size_t>(threads));
  // An idle scheduler thread polls with 50 us sleeps for a while before it waits on a condition
  // variable that an enqueue signals. Skipping that phase took a pool's apply_async round trip
  // from ~90 us to ~35 us here (bench/pool_overhead), at no cost to throughput.
  config.set("work-stealing.moderate-poll-attempts", std::size_t{0});
  // The network layer (network.hpp). Heartbeats are off in CAF by default, so a frozen peer
  // would never be noticed; every troupe process sends them, so an idle live peer never misses
  // them. A peer silent for the timeout (15 beats) is reported lost: long enough that a loaded
  // machine's late beats (hundreds of processes on two cores) do not read as deaths. A peer
  // that dies is seen at once all the same: its kernel closes its connections.
  config.load<caf::io::middleman>();
  config.set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds{200}});
  config.set("middleman.connection-timeout", caf::timespan{std::chrono::milliseconds{3000}});
  system = std::make_unique<caf::actor_system>(config);
  network = std::make_unique<detail::transport>(*system, handshake_limits{});
}

runtime_state::~runtime_state() { stop(); }

void runtime_state::stop() noexcept {
  network.reset();
  // Before the system's destructor stops the clock these threads still report to
  // (detached_threads.hpp). They end once their actors have (the services were shut down): a
  // thread still running after the limit is one whose actor someone still holds.
  if (const auto running = actor_threads->await_exit(std::chrono::seconds{10}); running > 0)
    std::cerr << "troupe: " << running << " actor threads still ran as the runtime stopped\n";
  system.reset();
}

} // namespace detail

namespace {

detail::worker_main installed_worker_main = nullptr;
detail::worker_main installed_join_main = nullptr;

} // namespace

void detail::install_worker_main(worker_main main) noexcept { installed_worker_main = main; }
void detail::install_join_main(worker_main main) noexcept { installed_join_main = main; }

namespace {

/// The scheduler runs troupe's control actors (dispatchers, world members, collective cores);
/// pool workers have threads of their own. On two cores a second scheduler thread, woken to
/// steal each message, takes a core from the workers: one thread took bench/graph's 2-worker
/// speedup from 1.42-1.60 x to 1.72-1.82 x and rpc_sync over TCP from 259 to 234 us, with the
/// pool, process-pool and staged figures unchanged. Larger machines keep two.
int default_scheduler_threads() { return std::thread::hardware_concurrency() <= 2 ? 1 : 2; }
constexpr std::string_view worker_flag = "--troupe-worker=";
constexpr std::string_view join_flag = "--troupe-join=";
constexpr std::string_view flag_prefix = "--troupe-";
constexpr std::string_view threads_flag = "--troupe-scheduler-threads=";

int parse_positive(std::string_view text, std::string_view flag) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 1)
    throw invalid_argument(std::string{flag} + " needs a positive integer, got '" +
                           std::string{text} + "'");
  return value;
}

int checked_threads(const runtime_options& options) {
  if (options.scheduler_threads && *options.scheduler_threads < 1)
    throw invalid_argument("runtime_options::scheduler_threads must be at least 1, got " +
                           std::to_string(*options.scheduler_threads));
  return options.scheduler_threads.value_or(default_scheduler_threads());
}

runtime_options with_flags(int argc, char** argv, runtime_options options) {
  for (int i = 1; i < argc && argv[i] != nullptr; ++i) {
    std::string_view arg{argv[i]};
    if (!arg.starts_with(flag_prefix))
      continue;
    if (arg.starts_with(threads_flag)) {
      options.scheduler_threads = parse_positive(arg.substr(threads_flag.size()), threads_flag);
    } else if (arg.starts_with(worker_flag)) {
      if (installed_worker_main == nullptr)
        throw state_error("started as a troupe worker (" + std::string{arg} +
                          "), but this program starts no worker processes");
      std::exit(installed_worker_main(std::string{arg.substr(worker_flag.size())}));
    } else if (arg.starts_with(join_flag) || arg == join_flag.substr(0, join_flag.size() - 1)) {
      // Both --troupe-join=HOST:PORT and --troupe-join HOST:PORT.
      std::string address{arg.substr(std::min(arg.size(), join_flag.size()))};
      if (!arg.starts_with(join_flag)) {
        if (i + 1 >= argc || argv[i + 1] == nullptr)
          throw invalid_argument("--troupe-join needs HOST:PORT after it");
        address = argv[i + 1];
      }
      if (installed_join_main == nullptr)
        throw state_error("asked to join a pool (" + std::string{arg} +
                          "), but this program starts no process pools");
      std::exit(installed_join_main(address));
    } else {
      throw invalid_argument("unknown troupe flag '" + std::string{arg} +
                             "' (known: --troupe-scheduler-threads=N, --troupe-join=HOST:PORT)");
    }
  }
  return options;
}

} // namespace

runtime::runtime() : runtime(runtime_options{}) {}

runtime::runtime(runtime_options options)
  : state_(std::make_unique<detail::runtime_state>(checked_threads(options))) {}

runtime::runtime(int argc, char** argv, runtime_options options)
  : runtime(with_flags(argc, argv, options)) {}

runtime::~runtime() {
  state_->services->shutdown_all();
  state_->stop();
}

int runtime::scheduler_threads() const noexcept { return state_->scheduler_threads; }

detail::runtime_state& runtime_state_of(runtime& rt) { return *rt.state_; }

} // namespace troupe
