// A process pool's slot actor drives its worker (a local process or a node on another host)
// through this: it streams a lease's chunks to the worker, several in flight, settles them from
// its replies, and when the worker dies, freezes or sends what cannot be read, settles all the
// worker held before the slot goes. Chunks in flight are handed back for another worker to try
// (within max_retries) or fail with worker_lost; chunks it never started go back untouched. The
// dispatcher's on_down (dispatcher.cpp) then replaces the slot: the one place a lost slot is
// handled, for every kind of worker.
#pragma once

#include "lease.hpp"
#include "lost_work.hpp"
#include "process/slot_placements.hpp"
#include "process/worker_link.hpp"
#include "slot_registry.hpp"

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace troupe::detail {

struct outgoing_batch; // worker_driver.cpp

class worker_driver {
public:
  /// `node`: a worker that joined from another host; otherwise a local process is started on
  /// first use (and never restarted here: a new slot actor starts the next one).
  /// `placements`: the actors placed in the pool's slots, which a local worker's process hosts.
  worker_driver(std::size_t slot, std::shared_ptr<const process_settings> settings,
                std::shared_ptr<worker_link> node, const std::atomic<bool>& terminating,
                slot_meter& meter, give_back_fn give_back,
                std::shared_ptr<slot_placements> placements);
  ~worker_driver();
  worker_driver(const worker_driver&) = delete;
  worker_driver& operator=(const worker_driver&) = delete;

  /// Runs the lease to its end. False if the worker was lost: everything it held has been
  /// settled, and the slot must go.
  bool run(lease& work);

  /// Hands the worker's process the actors placed in this slot that no process took yet,
  /// starting the process if none runs. False if the process is lost (the slot must go).
  bool place_actors();

  /// Between leases: hands on what the worker relayed since (a thread of its own may call an
  /// actor here at any time). False if the worker is lost (the slot must go).
  bool relay_between_leases();

  /// After an unexpected exception: settles everything held (the chunks in flight and the
  /// lease's unstarted ones) with `why`, and stops the worker.
  void fail_all(lease& work, const std::exception_ptr& why) noexcept;

  std::string label() const;

private:
  void start_process();
  /// Hands the calls the worker relayed to actors of this process on (relay_host.hpp).
  void relay(reply_batch& replies);
  /// Sends the worker chunks of `work` while it has room for more in flight; false if the
  /// link refused a batch (the worker is gone).
  bool send_more(lease& work, process_job& job);
  /// Encodes chunk `chunk` of `job` as a request, its large tensors into segments `held` keeps
  /// (a local worker's); nullopt, the chunk failed, if it cannot travel.
  std::optional<chunk_request> encode(lease& work, process_job& job, std::size_t chunk,
                                      std::unique_ptr<segment_store>& held);
  /// Sends `batch` (with the context setup before a node's first) and empties it; false if the
  /// link refused it.
  bool flush(outgoing_batch& batch);
  /// Whether `replies` end every chunk of `work` in flight, none being left to claim.
  bool settles_the_last(const reply_batch& replies, const lease& work) const;
  /// Completes a chunk from its reply.
  void settle(const chunk_reply& reply, process_job& job);
  /// Ends a chunk in failure (counted as one failure of this worker).
  void fail(job& target, std::size_t chunk, std::exception_ptr why) noexcept;
  /// The worker is gone: what it held is given back or failed.
  void lose(lease& work, const failure& why);

  std::size_t slot_;
  std::shared_ptr<const process_settings> settings_;
  std::shared_ptr<worker_link> link_;
  bool remote_;
  bool context_sent_ = false; // a node's context setup travels with its first batch
  const std::atomic<bool>& terminating_;
  slot_meter& meter_; // the slot actor's, which outlives this
  int pid_ = 0; // of the local process this worker started, once it has
  give_back_fn give_back_;
  std::shared_ptr<slot_placements> placements_;
  std::uint64_t next_request_ = 0;
  std::map<std::uint64_t, std::size_t> in_flight_; // request id -> chunk
};

} // namespace troupe::detail
