// Workers on other hosts, over actors' network layer: a node started as
// `prog --troupe-join=HOST:PORT` reaches the pool's gate (a published actor; TLS when the pool
// and the node have certificates), proves it knows the pool's secret without sending it (an
// HMAC of a fresh nonce), and then serves request batches like a local worker. CAF monitors the
// node, with heartbeats, so a dead or frozen node is lost within the heartbeat timeout.
#pragma once

#include "process/worker_link.hpp"

#include "troupe/actors/runtime_state.hpp"

#include <caf/actor.hpp>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace troupe {
struct process_pool_options;
}

namespace troupe::detail {

/// A node's slot, seen from the pool. Its receiver actor feeds it replies and tells it when
/// the node is lost.
class node_link final : public worker_link {
public:
  node_link(runtime_state& rt, caf::actor node, std::string label);
  ~node_link() override;
  bool send(const request_batch& requests) override;
  std::optional<reply_batch> receive(std::chrono::milliseconds wait) override;
  bool alive() override;
  std::string lost_reason() const override;
  void kill() override;
  const std::string& label() const noexcept override { return label_; }
  void on_lost(std::function<void()> notify) override;

  /// Called by the receiver actor.
  void delivered(std::vector<char> replies);
  void lost(std::string why);
  void attach(caf::actor receiver) { receiver_ = std::move(receiver); }

private:
  runtime_state& rt_;
  caf::actor node_, receiver_;
  std::string label_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<std::vector<char>> replies_;
  std::optional<std::string> lost_;
  std::function<void()> notify_lost_;
};

/// The pool's gate: publishes an actor nodes join through, and hands each as a link to
/// `joined`. Stops taking nodes when destroyed.
class node_gate {
public:
  node_gate(runtime_state& rt, const process_pool_options& options,
            std::function<void(std::shared_ptr<worker_link>)> joined);
  ~node_gate();
  std::uint16_t port() const noexcept { return port_; }

private:
  runtime_state& rt_;
  caf::actor gate_;
  std::uint16_t port_ = 0;
};

/// The node's side: installed as runtime's join main.
int run_remote_node(const std::string& address);

} // namespace troupe::detail
