#include "process/worker_driver.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "process/process_link.hpp"
#include "process/relay_host.hpp"

#include "troupe/actors/detail/failure.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/queues/detail/segment_store.hpp"

#include <memory>
#include <optional>
#include <vector>

namespace troupe::detail {

namespace {

using namespace std::chrono_literals;

/// A batch stops growing at this many encoded bytes: a few large chunks do not hold the ring
/// (or a socket) for long, and what the next message carries is sent while this one runs.
constexpr std::size_t batch_budget = 8 << 20;
/// What a request adds to its calls' bytes (id, task name, framing), at most, for size checks.
constexpr std::size_t request_overhead = 4096;

} // namespace

/// A batch being put together: its requests, and the segments their large tensors went to,
/// which the message holds once it is sent.
struct outgoing_batch {
  request_batch requests;
  std::vector<std::unique_ptr<segment_store>> segments;
  std::size_t bytes = 0;

  void add(chunk_request request, std::unique_ptr<segment_store> held) {
    bytes += request.calls.size();
    requests.chunks.push_back(std::move(request));
    if (held)
      segments.push_back(std::move(held));
  }
  bool empty() const { return requests.chunks.empty(); }
};

worker_driver::worker_driver(std::size_t slot, std::shared_ptr<const process_settings> settings,
                             std::shared_ptr<worker_link> node,
                             const std::atomic<bool>& terminating, slot_meter& meter,
                             give_back_fn give_back, std::shared_ptr<slot_placements> placements)
  : slot_(slot), settings_(std::move(settings)), link_(std::move(node)), remote_(link_ != nullptr),
    terminating_(terminating), meter_(meter), give_back_(std::move(give_back)),
    placements_(std::move(placements)) {}

worker_driver::~worker_driver() {
  if (pid_ != 0)
    meter_.registry().vacated(slot_, pid_);
}

std::string worker_driver::label() const {
  return link_ ? link_->label() : "worker " + std::to_string(slot_);
}

bool worker_driver::run(lease& work) {
  auto* job = dynamic_cast<process_job*>(work.job().get());
  if (job == nullptr)
    throw state_error("a thread pool's job reached a process pool's worker");
  if (!link_) {
    start_process();
  } else {
    // A worker that died while idle is noticed only now; it never saw this lease, so all of it
    // goes to the others. Nothing is in flight: all that arrives here is what a thread of the
    // worker's own relayed to actors here after its last task.
    if (auto late = link_->receive(0ms))
      relay(*late);
    if (!link_->alive()) {
      link_->kill();
      run_unstarted_elsewhere(work, give_back_);
      return false;
    }
  }
  for (;;) {
    if (!place_actors() || !send_more(work, *job)) {
      lose(work, link_->loss());
      return false;
    }
    if (in_flight_.empty())
      return true;
    if (auto replies = link_->receive(20ms)) {
      relay(*replies);
      if (settles_the_last(*replies, work))
        work.mark_finishing();
      for (const auto& reply : replies->chunks) {
        settle(reply, *job);
        ++work.ran;
      }
      continue;
    }
    if (terminating_.load()) {
      // terminate() stops now: a process, unlike a thread, can be stopped mid-task.
      const auto why =
        std::make_exception_ptr(pool_closed("the pool was terminated while this work was running"));
      for (const auto& [id, chunk] : in_flight_)
        fail(*work.job(), chunk, why);
      in_flight_.clear();
      link_->kill();
      return false;
    }
    if (!link_->alive()) {
      lose(work, link_->loss());
      return false;
    }
  }
}

bool worker_driver::relay_between_leases() {
  if (!link_ || remote_)
    return true;
  // Nothing is in flight between leases: all that arrives is relayed calls.
  if (auto late = link_->receive(0ms))
    relay(*late);
  return link_->alive();
}

void worker_driver::relay(reply_batch& replies) {
  if (!replies.relayed.empty())
    if (auto answers = link_->relay_answers())
      relay_calls(replies.relayed, answers, label());
}

void worker_driver::start_process() {
  auto started = std::make_shared<process_link>(slot_, settings_);
  pid_ = started->pid();
  meter_.registry().serving(slot_, pid_);
  link_ = std::move(started);
}

bool worker_driver::place_actors() {
  // A node's slot hosts no actor (pool_core refuses to place one there).
  if (remote_ || !placements_->pending(slot_))
    return true;
  if (!link_)
    start_process();
  else if (!link_->alive())
    return false; // a queue with room takes a batch whether or not anyone is there to read it
  request_batch batch;
  batch.actors = placements_->take(slot_, pid_);
  return batch.actors.empty() || link_->send(batch);
}

bool worker_driver::send_more(lease& work, process_job& job) {
  const auto limit = settings_->max_message_bytes;
  const auto budget = limit == 0 ? batch_budget : std::min(batch_budget, limit - request_overhead);
  outgoing_batch batch;
  std::size_t chunk = 0;
  while (in_flight_.size() < settings_->in_flight && work.claim(chunk)) {
    std::unique_ptr<segment_store> held;
    auto request = encode(work, job, chunk, held);
    if (!request)
      continue;
    if (!batch.empty() && batch.bytes + request->calls.size() > budget && !flush(batch)) {
      // This chunk is claimed but never left: the dispatcher runs it elsewhere (lose() only
      // settles what is in flight, and the lease no longer has it to take back).
      give_back_(work.job(), chunk, chunk + 1, work.attempts());
      return false;
    }
    in_flight_.emplace(request->id, chunk);
    batch.add(std::move(*request), std::move(held));
    if (batch.requests.chunks.size() >= settings_->batch && !flush(batch))
      return false;
  }
  return flush(batch);
}

std::optional<chunk_request> worker_driver::encode(lease& work, process_job& job, std::size_t chunk,
                                                   std::unique_ptr<segment_store>& held) {
  chunk_request request{next_request_++, job.task_name(), job.with_context(), {}};
  try {
    // Local workers: large tensors travel through their queues' segments. Remote: inline.
    std::optional<segment_store> results;
    std::optional<crossing_store> crossing;
    if (auto requests = link_->request_segments()) {
      held = std::make_unique<segment_store>(std::move(*requests));
      results.emplace(std::move(*link_->reply_segments()));
      crossing.emplace(*held, *results);
    }
    std::optional<tensor_store_scope> scope;
    if (crossing)
      scope.emplace(*crossing);
    request.calls = job.encode_chunk(chunk);
  } catch (...) {
    fail(*work.job(), chunk, std::current_exception());
    return std::nullopt;
  }
  const auto limit = settings_->max_message_bytes;
  if (limit != 0 && request.calls.size() + request_overhead > limit) {
    // Made in its own statement: the temporary error shares its message with the copy the
    // consumer reads, and must be gone before fail() hands that copy over.
    const auto too_big = std::make_exception_ptr(capacity_error(
      "the arguments of this chunk take " + readable_bytes(request.calls.size()) +
      " encoded, more than the pool's max_message_bytes (" + readable_bytes(limit) + ")"));
    fail(*work.job(), chunk, too_big);
    return std::nullopt;
  }
  return request;
}

bool worker_driver::flush(outgoing_batch& batch) {
  if (batch.empty())
    return true;
  if (remote_ && !context_sent_) {
    batch.requests.slot = slot_;
    if (!settings_->context_factory.empty())
      batch.requests.context = context_setup{settings_->context_factory, "", {}, slot_};
  }
  context_sent_ = true;
  for (auto& held : batch.segments)
    held->hold_for_queue();
  const bool sent = link_->send(batch.requests);
  if (!sent)
    for (auto& held : batch.segments)
      held->release_for_queue();
  batch = outgoing_batch{};
  return sent;
}

bool worker_driver::settles_the_last(const reply_batch& replies, const lease& work) const {
  if (work.unclaimed() != 0)
    return false;
  std::size_t in_hand = 0;
  for (const auto& reply : replies.chunks)
    in_hand += in_flight_.count(reply.id);
  return in_hand == in_flight_.size();
}

void worker_driver::settle(const chunk_reply& reply, process_job& job) {
  const auto it = in_flight_.find(reply.id);
  if (it == in_flight_.end())
    return;
  const auto chunk = it->second;
  in_flight_.erase(it);
  if (reply.why.failed()) {
    // Made before fail() hands it over, like the capacity error in encode().
    const auto why = reply.why.exception(label());
    fail(job, chunk, why);
    return;
  }
  // Large tensors in results come from the reply queue's segments.
  std::optional<segment_store> results = link_->reply_segments();
  std::optional<tensor_store_scope> scope;
  if (results)
    scope.emplace(*results);
  meter_.count(1, job.accept_chunk(chunk, reply.outcomes, label()));
  job.ended(1);
}

void worker_driver::fail(job& target, std::size_t chunk, std::exception_ptr why) noexcept {
  meter_.count(1, 1);
  fail_chunks(target, chunk, chunk + 1, std::move(why));
}

void worker_driver::lose(lease& work, const failure& why) {
  link_->kill();
  const auto lost = why.with(" while running this work").exception();
  for (const auto& [id, chunk] : in_flight_)
    retry_or_fail(work, chunk, settings_->max_retries, lost, give_back_, meter_);
  in_flight_.clear();
  run_unstarted_elsewhere(work, give_back_);
}

void worker_driver::fail_all(lease& work, const std::exception_ptr& why) noexcept {
  for (const auto& [id, chunk] : in_flight_)
    fail(*work.job(), chunk, why);
  in_flight_.clear();
  fail_unstarted(work, why, &meter_);
  if (link_)
    link_->kill();
}

} // namespace troupe::detail
