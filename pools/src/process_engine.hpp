// A process pool's engine: the dispatcher actor, which hands chunks to the slot actors by
// demand, each driving one worker process (or a node from another host), and the gate where
// nodes join. Also what only process pools do: their workers' pids, the port nodes join on,
// and actors in worker processes.
#pragma once

#include "actors.hpp"
#include "pool_engine.hpp"
#include "process/slot_placements.hpp"
#include "remote/node_link.hpp"
#include "slot_registry.hpp"

#include "troupe/actors/actor.hpp"
#include "troupe/actors/runtime_state.hpp"
#include "troupe/pools/pool_options.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

namespace troupe::detail {

class process_engine final : public pool_engine, public service {
public:
  process_engine(runtime& rt, worker_setup setup);
  ~process_engine() override;

  /// Takes worker nodes from other hosts (pools with a remote secret or TLS).
  void listen(const process_pool_options& options);

  void submit(job_ptr job) override;
  void wake() override;
  void cancel(job_ptr job) override;
  void close() override;
  void terminate() override;
  void join() override;
  std::size_t size() const noexcept override { return workers_ + nodes_->load(); }
  std::vector<worker_stats> stats() const override { return slots_->stats(size()); }

  std::vector<int> worker_pids() const { return slots_->pids(); }
  std::uint16_t listen_port() const noexcept { return listener_ ? listener_->port() : 0; }
  std::shared_ptr<actor_core> spawn_actor(actor_options options, std::string type,
                                          std::vector<std::byte> constructor);
  std::shared_ptr<actor_core> spawn_actor_in_slot(std::size_t slot, actor_options options,
                                                  std::string type,
                                                  std::vector<std::byte> constructor);

  void shutdown() noexcept override { stop(); }

private:
  enum class pool_state { running, closed, terminated };

  /// Sends `message` to the dispatcher unless the pool is past `allowed_until`; true if sent.
  template <class... Ts>
  bool send_while(pool_state allowed_until, Ts&&... message);
  /// No more actors are placed in slots (before the pool's lock: see slot_placements).
  void stop_placing(const char* why) noexcept;
  void stop() noexcept;

  runtime& rt_;
  runtime_state& rt_state_;
  std::shared_ptr<service_registry> registry_;
  std::size_t workers_;
  std::size_t max_tasks_; // 0: workers are never replaced for having done enough
  std::shared_ptr<std::atomic<std::size_t>> nodes_;
  std::shared_ptr<slot_registry> slots_;
  std::shared_ptr<const process_settings> process_;
  std::shared_ptr<slot_placements> placements_;
  std::unique_ptr<node_gate> listener_;
  std::shared_ptr<stop_signal> stopped_ = std::make_shared<stop_signal>();
  // Guards `state_` and orders messages: a submit that saw `running` is in the dispatcher's
  // table or mailbox before the close or terminate that follows it.
  std::shared_mutex mutex_;
  pool_state state_ = pool_state::running;
  dispatcher_actor dispatcher_;
  std::shared_ptr<dispatch_table> table_; // callers submit into it directly
};

} // namespace troupe::detail
