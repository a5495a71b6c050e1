// A collective group as this member holds it: its engine, and the order its
// operations run in. Collectives run one at a time in the order they were
// called (the engines need every member to run them in one order); a
// synchronous call runs on its caller's thread once the asynchronous ones
// started before it are done, the asynchronous ones on the group's own thread.
// Point-to-point messages run apart from the collectives: a send on its
// caller's thread, each asynchronous one on a thread of its own. The first
// engine failure breaks the group.
#pragma once

#include "collective_engine.hpp"
#include "collective_op.hpp"

#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <thread>

namespace troupe::detail {

class collective_core {
public:
  collective_core(std::unique_ptr<collective_engine> engine, engine_setup setup);
  /// destroy(), then waits for the group's threads.
  ~collective_core();

  int run(collective_call call);
  collective_handle start(collective_call call);
  /// Later calls throw state_error; queued operations fail; waits on messages
  /// end.
  void destroy() noexcept;

  const engine_setup setup;

private:
  struct queued {
    collective_call call;
    std::shared_ptr<collective_op> op;
  };

  /// invalid_argument for bad ranks or lists; state_error once destroyed or
  /// broken.
  void validate(const collective_call& call);
  /// Runs a collective (this thread holds the turn); the engine's failure
  /// breaks the group.
  void execute(const collective_call& call);
  /// The shape check (check_shapes): invalid_argument naming both sides when the members
  /// disagree. True if the engine ran the collective in the same exchange.
  bool check_ran_it(const collective_call& call, std::uint32_t sequence);
  void run_collective(const collective_call& call, std::uint32_t sequence);
  int run_point_to_point(const collective_call& call);
  int receive(const collective_call& call);
  /// Runs `work` on a thread of its own, which the destructor joins.
  collective_handle detach(std::function<int()> work);
  void serve_queue();
  void broken(const std::exception& why) noexcept;
  std::mutex& receive_lock(int tag);

  std::unique_ptr<collective_engine> engine_;

  std::mutex mutex_;
  std::condition_variable turn_;
  std::deque<queued> queue_;
  bool busy_ = false; // a collective is running
  int inside_ = 0; // calls running in the engine, on any thread
  bool destroyed_ = false;
  std::string failure_; // why the group broke; empty while it works
  std::uint32_t sequence_ = 0;
  std::thread queue_thread_;

  struct detached {
    std::shared_ptr<collective_op> op;
    std::thread thread;
  };
  std::mutex threads_mutex_;
  std::list<detached> threads_; // asynchronous point-to-point ones
  std::mutex destroy_mutex_;
  std::map<int, std::mutex> receive_locks_; // one receive at a time per tag
};

} // namespace troupe::detail
