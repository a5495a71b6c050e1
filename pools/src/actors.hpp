// The typed actor interfaces of a thread pool: one dispatcher, N workers.
#pragma once

#include "lease.hpp"

#include "troupe/pools/detail/job.hpp"

#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

#include <condition_variable>
#include <functional>
#include <mutex>

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::job_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::lease_ptr)

namespace troupe::detail {

using submit_atom = caf::atom_constant<caf::atom("submit")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
using wake_atom = caf::atom_constant<caf::atom("wake")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using close_atom = caf::atom_constant<caf::atom("close")>;
using terminate_atom = caf::atom_constant<caf::atom("terminate")>;

/// A worker runs the leases it is sent, one at a time, and reports each back when done.
using worker_actor = caf::typed_actor<caf::reacts_to<lease_ptr>>;

using dispatcher_actor = caf::typed_actor<
  caf::reacts_to<submit_atom, job_ptr>,
  caf::reacts_to<cancel_atom, job_ptr>,
  caf::reacts_to<wake_atom>,
  // A worker finished a lease: worker slot, worker generation, the lease.
  caf::reacts_to<done_atom, std::size_t, std::size_t, lease_ptr>,
  caf::reacts_to<close_atom>,
  caf::reacts_to<terminate_atom>>;

/// Set once the dispatcher has stopped (after its workers did), for join().
class stop_signal {
public:
  void set() {
    {
      std::lock_guard guard{mutex_};
      stopped_ = true;
    }
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock{mutex_};
    cv_.wait(lock, [&] { return stopped_; });
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

/// What the dispatcher needs to start (and restart) workers.
struct worker_setup {
  std::size_t workers = 1;
  std::function<void()> initializer;
  std::size_t max_tasks = 0; // 0: unlimited
  std::vector<void*> contexts;
};

dispatcher_actor spawn_dispatcher(caf::actor_system& system, worker_setup setup,
                                  std::shared_ptr<stop_signal> stopped);

} // namespace troupe::detail
