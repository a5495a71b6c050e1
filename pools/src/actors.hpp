// The typed actor interfaces of a process pool: one dispatcher, a slot actor per worker.
#pragma once

#include "lease.hpp"
#include "process/slot_placements.hpp"
#include "slot_registry.hpp"

#include "troupe/actors/annotated.hpp"
#include "troupe/actors/detached_threads.hpp"
#include "troupe/pools/detail/job.hpp"

#include <caf/abstract_actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/send.hpp>
#include <caf/typed_actor.hpp>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace troupe::detail {
class worker_link;
}
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::job_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::detail::lease_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<troupe::detail::worker_link>)

namespace troupe::detail {

using submit_atom = caf::atom_constant<caf::atom("submit")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
using wake_atom = caf::atom_constant<caf::atom("wake")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using close_atom = caf::atom_constant<caf::atom("close")>;
using terminate_atom = caf::atom_constant<caf::atom("terminate")>;
using join_atom = caf::atom_constant<caf::atom("join")>;
using give_back_atom = caf::atom_constant<caf::atom("giveback")>;
using place_atom = caf::atom_constant<caf::atom("place")>;
using relays_atom = caf::atom_constant<caf::atom("relays")>;

/// A worker runs the leases it is sent, one at a time, and reports each back when done; a
/// process worker hands its process the actors placed in its slot when told (place_atom), and
/// between leases looks for calls its process relays to actors here (relays_atom, to itself).
using worker_actor = caf::typed_actor<caf::reacts_to<lease_ptr>, caf::reacts_to<place_atom>,
                                      caf::reacts_to<relays_atom>>;

using dispatcher_actor =
  caf::typed_actor<caf::reacts_to<submit_atom, job_ptr>, caf::reacts_to<cancel_atom, job_ptr>,
                   caf::reacts_to<wake_atom>,
                   // A worker finished a lease: worker slot, worker generation, the lease.
                   caf::reacts_to<done_atom, std::size_t, std::size_t, lease_ptr>,
                   caf::reacts_to<close_atom>, caf::reacts_to<terminate_atom>,
                   // A worker node from another host joined (process pools that take nodes).
                   caf::reacts_to<join_atom, std::shared_ptr<worker_link>>,
                   // A worker was lost holding chunks [first, last) of the job, to run elsewhere;
                   // they have been tried that many times already.
                   caf::reacts_to<give_back_atom, job_ptr, std::size_t, std::size_t, std::size_t>,
                   // An actor was placed in (slot): its worker actor hands it over.
                   caf::reacts_to<place_atom, std::size_t>>;

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

struct process_settings;

/// What the dispatcher needs to start (and restart) a process pool's workers.
struct worker_setup {
  std::size_t workers = 1;
  std::size_t max_tasks = 0; // 0: unlimited
  /// How each slot actor starts and watches its worker process.
  std::shared_ptr<const process_settings> process;
  /// Raised on terminate: worker processes are killed rather than waited for.
  std::shared_ptr<std::atomic<bool>> terminating = std::make_shared<std::atomic<bool>>(false);
  /// Worker nodes from other hosts serving now (for size()).
  std::shared_ptr<std::atomic<std::size_t>> nodes = std::make_shared<std::atomic<std::size_t>>(0);
  /// The worker processes serving the slots now (for worker_pids()).
  std::shared_ptr<slot_registry> slots = std::make_shared<slot_registry>();
  /// The actors placed in the slots.
  std::shared_ptr<slot_placements> placements = std::make_shared<slot_placements>();
  /// The runtime's count of detached threads, which the slot actors join.
  std::shared_ptr<detached_threads> actor_threads;
};

/// The dispatcher's table of slots, leases and backlog (dispatcher.cpp), under a lock of its
/// own, which the dispatcher actor and submitting callers share.
class dispatch_table;

/// A process pool's dispatcher: the actor, and its table, into which callers submit directly.
struct pool_dispatcher {
  dispatcher_actor actor;
  std::shared_ptr<dispatch_table> table;
};

pool_dispatcher spawn_dispatcher(caf::actor_system& system, worker_setup setup,
                                 std::shared_ptr<stop_signal> stopped);

enum class direct_submit {
  taken, // in the backlog, its first leases with idle slots
  refused, // send it as a message (counted as queued already): the table's lock is taken, a
           // submit message is still queued, or the dispatcher is stopping (it fails the job)
  broken, // in the backlog, but the table's bookkeeping threw: the pool must stop
};

/// From a caller: puts `job` in the backlog and hands its first leases to idle slots, one
/// wake-up fewer than a message to the dispatcher. Throws only before anything changed.
direct_submit submit_directly(dispatch_table& table, const job_ptr& job);

/// Once the dispatcher has stopped: lets go of the slot actors' handles (the actor system may go
/// next) and of the backlog.
void release_slots(dispatch_table& table) noexcept;

} // namespace troupe::detail
