// An actor in another process: a worker process of its own, or one of a pool's workers (placed
// in its slot). The mailbox stays in this process and one call at a time goes to the worker:
// when the worker dies, the call it was running is the only one lost (failed with worker_lost,
// or sent again if idempotent), and those behind it go to the replacement untouched; stop()
// fails exactly the calls that have not started. A thread per actor ("the host") takes the
// answers, watches the worker, and restarts it.
#include "process/process_actor.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "process/process_link.hpp"
#include "process/relay_host.hpp"
#include "process/slot_link.hpp"

#include "troupe/actors/mailbox_bound.hpp"
#include "troupe/actors/runtime_state.hpp"
#include "troupe/queues/detail/segment_store.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace troupe::detail {

namespace {

using namespace std::chrono_literals;
using call_ptr = std::shared_ptr<actor_call>;
using clock = std::chrono::steady_clock;

/// How long the host waits for an answer before it looks at the worker's health.
constexpr auto watch_interval = 20ms;
/// How long the runtime's stop waits for a host to put its worker away.
constexpr auto shutdown_wait = 5s;

/// A call waiting in the mailbox, with its method's key (found when it was made, so that a
/// method TROUPE_ACTOR does not list fails in the caller's hands).
struct queued_call {
  call_ptr call;
  std::string method;
};

/// Calls to settle once the host's lock is released: settling runs the callers' callbacks.
using settlements = std::vector<std::pair<call_ptr, std::exception_ptr>>;

void settle_all(settlements& failed) noexcept {
  for (auto& [call, why] : failed)
    call->fail(why);
  failed.clear();
}

/// A worker serving an actor, started, and what the actor's errors call it.
struct started_worker {
  std::unique_ptr<worker_link> link;
  std::string label;
};
/// Starts a worker for the actor named by its argument: where the actor lives (a process of its
/// own, a pool's slot), and where its restarts go.
using worker_starter = std::function<started_worker(const std::string& name)>;

class actor_host final : public service, public std::enable_shared_from_this<actor_host> {
public:
  actor_host(runtime& rt, worker_starter starter, actor_options options)
    : name_(std::make_shared<const std::string>(options.name.empty() ? "actor" : options.name)),
      options_(std::move(options)), starter_(std::move(starter)),
      bound_(options_.max_mailbox, options_.mailbox_timeout),
      registry_(runtime_state_of(rt).services) {
    if (options_.max_mailbox == 0)
      throw invalid_argument("actor '" + *name_ + "': max_mailbox must be at least 1");
    if (options_.restart.within <= 0ms)
      throw invalid_argument("actor '" + *name_ + "': restart_policy::within must be positive");
  }

  /// Starts the worker process and the host's thread.
  void start() {
    link_ = start_worker();
    registry_->add(this);
    std::thread([self = shared_from_this()] { self->serve(); }).detach();
  }

  void enqueue(call_ptr call) {
    queued_call queued{std::move(call), {}};
    queued.method = queued.call->method_key();
    if (stopped_.load())
      std::rethrow_exception(stopped_error());
    if (!bound_.reserve(stopped_)) {
      if (stopped_.load())
        std::rethrow_exception(stopped_error());
      throw mailbox_full(*name_, bound_);
    }
    settlements failed;
    {
      std::lock_guard guard{mutex_};
      if (stopped_.load()) {
        bound_.release();
        std::rethrow_exception(stopped_error_locked());
      }
      mailbox_.push_back(std::move(queued));
      send_next(failed);
    }
    settle_all(failed);
  }

  bool alive() const noexcept { return !stopped_.load(); }
  const std::shared_ptr<const std::string>& name() const noexcept { return name_; }

  /// stop(): the call running finishes; the rest fail.
  void stop(const std::string& why) noexcept {
    settlements failed;
    {
      std::lock_guard guard{mutex_};
      if (ending_ == ending::stop || ending_ == ending::shutdown)
        return;
      ending_ = ending::stop;
      stop_taking_calls(why, failed);
    }
    bound_.wake_all();
    settle_all(failed);
  }

  /// The last handle is gone: what the mailbox holds still runs, then the worker goes.
  void drain() noexcept {
    std::lock_guard guard{mutex_};
    if (ending_ == ending::none)
      ending_ = ending::drain;
  }

  /// The runtime stops: everything fails now, and the worker goes before this returns.
  void shutdown() noexcept override {
    settlements failed;
    {
      std::unique_lock guard{mutex_};
      if (ending_ != ending::shutdown) {
        ending_ = ending::shutdown;
        stop_taking_calls("its runtime stopped", failed);
        if (running_)
          failed.emplace_back(std::move(running_), stopped_error_locked(true));
      }
      bound_.wake_all();
      // The host puts the worker away (its queues are shared memory, which must not outlive
      // this process) and says so; it never waits on the registry that calls this.
      finished_changed_.wait_for(guard, shutdown_wait, [&] { return finished_; });
    }
    settle_all(failed);
  }

private:
  enum class ending { none, drain, stop, shutdown };

  std::unique_ptr<worker_link> start_worker() {
    auto started = starter_(*name_);
    label_ = std::move(started.label);
    return std::move(started.link);
  }

  std::exception_ptr stopped_error() {
    std::lock_guard guard{mutex_};
    return stopped_error_locked();
  }
  /// `running`: the call had started (the runtime's stop does not wait for it).
  std::exception_ptr stopped_error_locked(bool running = false) const {
    return std::make_exception_ptr(
      actor_stopped("actor '" + *name_ + "' was stopped (" + cause_ +
                    (running ? ") while this call was running" : ") before this call ran")));
  }

  /// Under the lock: no more calls are taken, and those waiting fail.
  void stop_taking_calls(const std::string& why, settlements& failed) {
    if (!stopped_.load()) {
      cause_ = why;
      stopped_.store(true);
    }
    const auto error = stopped_error_locked();
    for (auto& queued : mailbox_) {
      bound_.release();
      failed.emplace_back(std::move(queued.call), error);
    }
    mailbox_.clear();
  }

  /// Under the lock: sends the first waiting call if none is running.
  void send_next(settlements& failed) {
    while (!running_ && !mailbox_.empty() && link_ && ending_ != ending::shutdown) {
      auto queued = std::move(mailbox_.front());
      mailbox_.pop_front();
      bound_.release();
      chunk_request request{next_id_++, std::move(queued.method), true, {}};
      auto requests = link_->request_segments();
      auto results = link_->reply_segments();
      try {
        // Large tensors travel through the worker's queues' segments, as a pool's do.
        crossing_store crossing{*requests, *results};
        tensor_store_scope scope{crossing};
        request.calls = queued.call->encode();
      } catch (...) {
        failed.emplace_back(std::move(queued.call), std::current_exception());
        continue;
      }
      requests->hold_for_queue();
      const auto id = request.id;
      bool sent = false;
      try {
        sent = link_->send(request_batch{{std::move(request)}, std::nullopt, std::nullopt});
      } catch (...) { // too large for the worker's queue: this call fails, the actor goes on
        requests->release_for_queue();
        failed.emplace_back(std::move(queued.call), std::current_exception());
        continue;
      }
      running_ = std::move(queued.call);
      running_id_ = id;
      if (!sent) {
        // The worker is gone; the host finds out and decides what becomes of this call.
        requests->release_for_queue();
        return;
      }
    }
  }

  /// The host's thread: answers, the worker's health, restarts, the end.
  void serve() noexcept {
    auto last_check = clock::now();
    for (;;) {
      std::optional<reply_batch> replies;
      try {
        replies = link_->receive(watch_interval);
      } catch (const std::exception&) {
        link_->kill(); // it sent what cannot be read: it is treated as lost
      }
      if (replies && !replies->relayed.empty())
        if (auto answers = link_->relay_answers()) // an actor there called one here
          relay_calls(replies->relayed, answers, label_);
      std::unique_lock guard{mutex_};
      if (replies)
        for (const auto& reply : replies->chunks)
          answered(reply, guard);
      if (!replies || clock::now() - last_check >= watch_interval) {
        last_check = clock::now();
        if (!link_->alive())
          lost(guard);
      }
      if (finished(guard))
        return;
    }
  }

  /// Settles the running call from its reply (the lock released meanwhile) and sends the next.
  void answered(const chunk_reply& reply, std::unique_lock<std::mutex>& guard) {
    if (!running_ || reply.id != running_id_)
      return;
    auto call = std::move(running_);
    settlements failed;
    send_next(failed);
    auto results = link_->reply_segments();
    const auto where = label_;
    guard.unlock();
    settle_all(failed);
    if (reply.why.failed()) {
      call->fail(reply.why.exception(where));
    } else {
      tensor_store_scope scope{*results};
      call->settle(reply.outcomes, where);
    }
    guard.lock();
  }

  /// The worker's owner ended it (the pool closed): the actor stops saying so, as stop() does,
  /// and the call it was running fails with actor_stopped.
  void ended(const std::string& why, std::unique_lock<std::mutex>& guard) {
    link_->kill();
    settlements failed;
    if (ending_ != ending::shutdown)
      ending_ = ending::stop;
    stop_taking_calls(why, failed);
    if (auto call = std::move(running_))
      failed.emplace_back(std::move(call), stopped_error_locked(true));
    guard.unlock();
    bound_.wake_all();
    settle_all(failed);
    guard.lock();
  }

  /// The worker died, froze or sent garbage: its call fails or goes again, and a new worker
  /// starts if the policy allows (else the actor is gone). A worker its owner ended is no loss.
  void lost(std::unique_lock<std::mutex>& guard) {
    if (auto why = link_->ended_by_owner(); !why.empty())
      return ended(why, guard);
    const auto why = link_->lost_reason();
    link_->kill();
    settlements failed;
    const bool restart = ending_ != ending::stop && ending_ != ending::shutdown && may_restart();
    if (auto call = std::move(running_)) {
      if (restart && call->idempotent && call->retries < options_.restart.max_call_retries) {
        ++call->retries;
        mailbox_.push_front({call, call->method_key()});
        bound_.queued.fetch_add(1); // it holds a place again, as the others waiting do
      } else {
        failed.emplace_back(std::move(call), std::make_exception_ptr(worker_lost(
                                               label_ + " " + why + " while running this call")));
      }
    }
    std::optional<actor_restart> restarted;
    if (restart) {
      try {
        link_ = start_worker();
        restarted = actor_restart{*name_, ++restarts_, "its worker process " + why};
      } catch (const std::exception& e) {
        stop_taking_calls(std::string{"its worker process "} + why +
                            ", and a new one could not be started: " + e.what(),
                          failed);
      }
    } else if (!stopped_.load()) {
      stop_taking_calls("its worker process " + why + past_policy(), failed);
    }
    send_next(failed);
    guard.unlock();
    bound_.wake_all();
    settle_all(failed);
    if (restarted && options_.on_restart) {
      try {
        options_.on_restart(*restarted);
      } catch (...) {
        report_escaped_exception("the on_restart of actor '" + *name_ + "'");
      }
    }
    guard.lock();
  }

  /// Under the lock: whether one more restart is within the policy (and counts it).
  bool may_restart() {
    const auto now = clock::now();
    while (!restart_times_.empty() && now - restart_times_.front() > options_.restart.within)
      restart_times_.pop_front();
    if (restart_times_.size() >= options_.restart.max_restarts)
      return false;
    restart_times_.push_back(now);
    return true;
  }

  std::string past_policy() const {
    const auto& policy = options_.restart;
    if (policy.max_restarts == 0)
      return ", and its restart_policy allows no restart";
    return ", past its restart_policy of " + std::to_string(policy.max_restarts) +
           " restarts within " + readable(policy.within);
  }

  /// Under the lock: whether the host is done (the worker put away, the registry left).
  bool finished(std::unique_lock<std::mutex>& guard) {
    const bool idle = !running_ && mailbox_.empty();
    const bool done = ending_ == ending::shutdown || (ending_ == ending::stop && !running_) ||
                      (ending_ == ending::drain && idle) || (stopped_.load() && !running_);
    if (!done)
      return false;
    stopped_.store(true);
    auto link = std::move(link_);
    const bool now = ending_ == ending::shutdown; // what it runs has failed already
    guard.unlock();
    if (now)
      link->kill();
    link.reset(); // lets the worker exit, kills it if it does not, and removes its queues
    guard.lock();
    finished_ = true;
    finished_changed_.notify_all();
    guard.unlock();
    registry_->remove(this);
    return true;
  }

  const std::shared_ptr<const std::string> name_;
  const actor_options options_;
  const worker_starter starter_;
  mailbox_bound bound_;
  const std::shared_ptr<service_registry> registry_;
  std::atomic<bool> stopped_{false};

  std::mutex mutex_;
  std::unique_ptr<worker_link> link_; // replaced only by the host's thread
  std::string label_;
  std::deque<queued_call> mailbox_;
  call_ptr running_; // sent to the worker, not answered yet
  std::uint64_t running_id_ = 0, next_id_ = 0;
  std::deque<clock::time_point> restart_times_; // within the policy's window
  std::size_t restarts_ = 0;
  ending ending_ = ending::none;
  std::string cause_; // why it stopped, once it has
  bool finished_ = false;
  std::condition_variable finished_changed_;
};

/// What the handles hold: the host, told when the last of them is gone.
class process_actor final : public actor_core {
public:
  explicit process_actor(std::shared_ptr<actor_host> host) : host_(std::move(host)) {}
  ~process_actor() override { host_->drain(); }

  void enqueue(call_ptr call) override { host_->enqueue(std::move(call)); }
  bool alive() const noexcept override { return host_->alive(); }
  void stop() noexcept override { host_->stop("stop() was called"); }
  const std::shared_ptr<const std::string>& name() const noexcept override { return host_->name(); }

private:
  std::shared_ptr<actor_host> host_;
};

std::shared_ptr<actor_core> start_actor(runtime& rt, worker_starter starter,
                                        actor_options options) {
  auto host = std::make_shared<actor_host>(rt, std::move(starter), std::move(options));
  host->start();
  return std::make_shared<process_actor>(std::move(host));
}

} // namespace

std::shared_ptr<actor_core> spawn_process_actor(runtime& rt,
                                                std::shared_ptr<const process_settings> settings,
                                                actor_options options, std::string type,
                                                std::vector<std::byte> constructor) {
  auto own = std::make_shared<process_settings>(*settings);
  own->initializer.clear(); // the pool's initializer is for its task workers
  own->context_factory.clear();
  own->context_type = std::move(type);
  own->context_values = {std::move(constructor)};
  return start_actor(
    rt,
    [own = std::shared_ptr<const process_settings>(std::move(own))](const std::string& name) {
      auto link = std::make_unique<process_link>(0, own);
      // The host's thread waits for answers; a spinning wait would take a core from the actor.
      link->spin_while_receiving(false);
      auto label = "actor '" + name + "' (pid " + std::to_string(link->pid()) + ")";
      return started_worker{std::move(link), std::move(label)};
    },
    std::move(options));
}

std::shared_ptr<actor_core> spawn_actor_in_slot(runtime& rt, slot_of_pool where,
                                                actor_options options, std::string type,
                                                std::vector<std::byte> constructor) {
  const context_setup object{"", std::move(type), std::move(constructor), where.slot};
  return start_actor(
    rt,
    [where = std::move(where), object](const std::string& name) {
      auto link =
        std::make_unique<slot_link>(where.slot, where.settings, where.placements, object,
                                    "actor '" + name + "' in worker " + std::to_string(where.slot));
      link->spin_while_receiving(false);
      auto label = link->label();
      return started_worker{std::move(link), std::move(label)};
    },
    std::move(options));
}

} // namespace troupe::detail
