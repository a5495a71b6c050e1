#include "process/relay_client.hpp"

#include "process/worker_wire.hpp"

#include "troupe/actors/actor.hpp"
#include "troupe/actors/detail/failure.hpp"
#include "troupe/actors/detail/tensor_store.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/queues/queue.hpp"

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

namespace troupe::detail {

namespace {

using namespace std::chrono_literals;

/// How often an idle reader looks whether its process is ending.
constexpr auto reader_wake = 200ms;

/// One channel's relayed calls: sent on its reply queue, answered on its answer queue.
class relay_channel {
public:
  explicit relay_channel(const std::string& stem)
    : replies_(queue<reply_batch>::open(stem + "-rep")),
      answers_(queue<reply_batch>::open(stem + "-ans")),
      reader_([this](std::stop_token stop) { read(stop); }) {}

  /// Sends `call` to actor `number` of the pool's process; its answer settles it.
  void send(std::uint64_t number, const std::shared_ptr<actor_call>& call) {
    relay_call relayed{0, number, call->method_key(), {}};
    {
      tensor_store_pause inline_tensors; // the pool's process relays them on as they are
      relayed.arguments = call->encode();
    }
    {
      std::lock_guard guard{mutex_};
      if (closed_)
        throw worker_lost("the process that started this worker no longer answers its calls");
      relayed.id = ++last_id_;
      pending_.emplace(relayed.id, call);
    }
    reply_batch batch;
    batch.relayed.push_back(std::move(relayed));
    try {
      replies_.put(batch);
    } catch (...) { // too large for the queue, say: this call fails alone
      std::lock_guard guard{mutex_};
      pending_.erase(batch.relayed.front().id);
      throw;
    }
  }

  /// Asks the pool's process to stop actor `number` (nobody waits on the answer).
  void stop(std::uint64_t number) noexcept {
    try {
      reply_batch batch;
      batch.relayed.push_back({0, number, {}, {}});
      replies_.put(batch);
    } catch (...) {
    }
  }

private:
  void read(std::stop_token stop) {
    while (!stop.stop_requested()) {
      reply_batch answers;
      try {
        answers = answers_.get(reader_wake);
      } catch (const timeout_error&) {
        continue;
      } catch (const queue_closed&) {
        break;
      } catch (const serialization_error&) {
        continue;
      }
      for (const auto& answer : answers.chunks)
        settle(answer);
    }
    fail_pending(); // the pool's process closed the channel: whatever waits, waits in vain
  }

  void settle(const chunk_reply& answer) {
    std::shared_ptr<actor_call> call;
    {
      std::lock_guard guard{mutex_};
      const auto at = pending_.find(answer.id);
      if (at == pending_.end())
        return;
      call = std::move(at->second);
      pending_.erase(at);
    }
    const std::string where = "the process that started this worker";
    if (answer.why.failed())
      call->fail(answer.why.exception(where));
    else
      call->settle(answer.outcomes, where);
  }

  void fail_pending() noexcept {
    std::map<std::uint64_t, std::shared_ptr<actor_call>> waiting;
    {
      std::lock_guard guard{mutex_};
      closed_ = true;
      waiting.swap(pending_);
    }
    const auto why = std::make_exception_ptr(
      worker_lost("the process that started this worker closed its channel before answering"));
    for (auto& [id, call] : waiting)
      call->fail(why);
  }

  queue<reply_batch> replies_;
  queue<reply_batch> answers_;
  std::mutex mutex_;
  std::map<std::uint64_t, std::shared_ptr<actor_call>> pending_;
  std::uint64_t last_id_ = 0;
  bool closed_ = false;
  std::jthread reader_; // last: stopped and joined before the rest goes
};

/// This process's channels, opened as their threads first relay a call; they live as long as
/// the process (their readers are joined when it exits).
class relay_channels {
public:
  static relay_channels& instance() {
    static relay_channels channels;
    return channels;
  }
  std::shared_ptr<relay_channel> of(const std::string& stem) {
    std::lock_guard guard{mutex_};
    auto& channel = channels_[stem];
    if (!channel)
      channel = std::make_shared<relay_channel>(stem);
    return channel;
  }
  std::string main_stem;

private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<relay_channel>> channels_;
};

thread_local std::string served_stem;

/// A handle's core in this worker process: each call relayed to the pool's process.
class relayed_actor final : public actor_core {
public:
  relayed_actor(actor_address address, std::shared_ptr<relay_channel> channel)
    : address_(std::move(address)), name_(std::make_shared<const std::string>(address_.name)),
      channel_(std::move(channel)) {}

  void enqueue(std::shared_ptr<actor_call> call) override {
    if (stopped_.load())
      throw actor_stopped("actor '" + *name_ + "' was stopped through this handle");
    channel_->send(address_.number, call);
  }
  bool alive() const noexcept override { return !stopped_.load(); }
  void stop() noexcept override {
    if (!stopped_.exchange(true))
      channel_->stop(address_.number);
  }
  const std::shared_ptr<const std::string>& name() const noexcept override { return name_; }
  std::optional<actor_address> address() const override { return address_; }

private:
  actor_address address_;
  std::shared_ptr<const std::string> name_;
  std::shared_ptr<relay_channel> channel_;
  std::atomic<bool> stopped_{false};
};

std::shared_ptr<actor_core> relay_to(const actor_address& address) {
  auto& channels = relay_channels::instance();
  const auto& stem = served_stem.empty() ? channels.main_stem : served_stem;
  return std::make_shared<relayed_actor>(address, channels.of(stem));
}

} // namespace

void install_relays(const std::string& main_stem) {
  relay_channels::instance().main_stem = main_stem;
  set_relay_resolver(&relay_to);
}

void serve_relays_through(const std::string& stem) { served_stem = stem; }

} // namespace troupe::detail
