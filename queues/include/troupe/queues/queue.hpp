// troupe::queue<T>: a typed inter-process queue on shared memory, with many senders and many
// receivers on one host.
//
//   auto q = troupe::queue<xt::xarray<float>>::create("frames", {.max_messages = 64});
//   q.put(frame);                                   // waits while the queue is full
//   // in another process (or thread):
//   auto q = troupe::queue<xt::xarray<float>>::open("frames");
//   xt::xarray<float> f = q.get();                  // or get(timeout), try_get()
//
// Every message goes to exactly one receiver; one sender's messages arrive in the order sent.
// Values are encoded with troupe::serialize, so anything it handles can travel, and corrupted
// bytes surface as troupe::serialization_error for the message that meets them. Tensors larger
// than queue_options::large_tensor_bytes are written once into their own shared-memory segment
// and only a handle goes through the queue (copy mode: the receiver gets its own array);
// troupe::shared_tensor<T> hands over memory without any copy (shared mode).
//
// A process killed anywhere inside put or get never blocks the others; the queue, its
// segments and their memory are freed when their last holder is gone (see shm_segment.hpp).
// A handle moved from throws troupe::state_error when used.
#pragma once

#include "troupe/actors/error.hpp"
#include "troupe/actors/serialization.hpp"
#include "troupe/queues/detail/byte_queue.hpp"
#include "troupe/queues/detail/segment_store.hpp"
#include "troupe/queues/queue_options.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace troupe {

/// A queue between processes on one host (multiprocessing.Queue), on shared memory: bounded, any
/// serializable type, many senders and receivers, each message to one receiver; large tensors
/// travel through shared-memory segments. Crash-safe: a process killed inside put or get blocks
/// nobody.
template <class T>
class queue {
  using mode = detail::byte_queue::mode;

public:
  /// A new queue; throws troupe::invalid_argument if the name is taken or malformed.
  static queue create(const std::string& name, const queue_options& options = {}) {
    return queue{name, mode::create, options};
  }
  /// Opens the queue, creating it (with `options`) if it does not exist.
  static queue open_or_create(const std::string& name, const queue_options& options = {}) {
    return queue{name, mode::open_or_create, options};
  }
  /// Opens an existing queue. Throws troupe::invalid_argument if there is none, and
  /// troupe::serialization_error naming both types if it carries another type.
  static queue open(const std::string& name) { return queue{name, mode::open, {}}; }

  /// Sends `value`, waiting while the queue is full. Throws troupe::queue_closed.
  void put(const T& value) { send(value, std::nullopt); }

  /// As put(), but throws troupe::timeout_error if the queue stays full for `timeout`.
  template <class Rep, class Period>
  void put(const T& value, std::chrono::duration<Rep, Period> timeout) {
    if (!send(value, deadline_after(timeout)))
      throw timeout_error("queue '" + name() + "' stayed full for the put's timeout");
  }

  /// As put(), but waits for room only while `keep_waiting()` says so (it is asked every
  /// 20 ms): for a sender whose receiver may die or freeze. False if it gave up; the value is
  /// then not sent.
  bool put_while(const T& value, const std::function<bool()>& keep_waiting) {
    return send(value, std::nullopt, keep_waiting);
  }

  /// The next value, waiting for one. Throws troupe::queue_closed once the queue is closed and
  /// drained, and troupe::serialization_error if this message's bytes are corrupted (the queue
  /// goes on with the next).
  T get() { return *receive(std::nullopt); }

  /// As get(), but throws troupe::timeout_error if nothing arrives within `timeout`.
  template <class Rep, class Period>
  T get(std::chrono::duration<Rep, Period> timeout) {
    auto value = receive(deadline_after(timeout));
    if (!value)
      throw timeout_error("nothing arrived on queue '" + name() + "' within the get's timeout");
    return std::move(*value);
  }

  /// The next value if one is there now.
  std::optional<T> try_get() { return receive(std::chrono::steady_clock::now()); }

  /// As get(), decoding into `value` and reusing its memory where the shapes allow (a tensor of
  /// the same shape is not reallocated): for consumers that want no allocation per message.
  void get_into(T& value) { (void)receive_into(value, std::nullopt); }

  /// The same, timeout_error if nothing arrives within `timeout`.
  template <class Rep, class Period>
  void get_into(T& value, std::chrono::duration<Rep, Period> timeout) {
    if (!receive_into(value, deadline_after(timeout)))
      throw timeout_error("nothing arrived on queue '" + name() + "' within the get's timeout");
  }

  /// Whether a put or get on this handle that has to wait first watches the queue for up to
  /// 50 us before it sleeps. On by default: in a stream the other side usually moves within that
  /// time, and neither side then pays a sleep and a wake-up. Turn it off on a handle whose
  /// reader hands each message to another thread of its process: on a machine with few cores
  /// the reader's watching takes the core that thread needs (troupe's own inboxes between world
  /// members, where a local rpc_sync took 65-100 us with it and 10-25 us without, on 2 cores).
  void spin_while_waiting(bool on) { core().spin_while_waiting(on); }

  /// No more puts; receivers drain what is left, then get queue_closed.
  void close() { core().close(); }
  /// Whether close() was called.
  bool closed() const { return core().closed(); }

  /// Messages in the queue now (approximate: others may be putting and getting).
  std::size_t size() const { return core().size(); }

  /// Removes the queue's name (the creator's job); processes that have it open keep working.
  void unlink() { core().unlink(); }

  /// The queue's name in /dev/shm.
  const std::string& name() const { return core().name(); }

  /// The largest message the queue takes (as its creator set max_message_bytes; 0: no limit).
  std::size_t max_message_bytes() const { return core().options().max_message_bytes; }

  /// For values encoded apart from put and get (troupe's process pools and world channels put
  /// bytes they encoded themselves): the store that carries their large tensors through this
  /// queue's shared-memory segments. Made active (detail::tensor_store_scope) while such a value
  /// is encoded or decoded, its tensors travel as they would inside a put or a get.
  detail::segment_store tensor_segments() { return detail::segment_store{core()}; }

private:
  queue(const std::string& name, mode how, const queue_options& options)
    : core_(std::make_unique<detail::byte_queue>(name, how, options, detail::tag_of<T>(),
                                                 detail::type_name<T>())) {}

  template <class Rep, class Period>
  static detail::deadline deadline_after(std::chrono::duration<Rep, Period> timeout) {
    return std::chrono::steady_clock::now() +
           std::chrono::ceil<std::chrono::steady_clock::duration>(timeout);
  }

  bool send(const T& value, detail::deadline until,
            const std::function<bool()>& keep_waiting = {}) {
    detail::segment_store store{core()};
    std::vector<std::byte> message;
    {
      detail::tensor_store_scope scope{store};
      message = serialize(value);
    }
    try {
      store.hold_for_queue(); // may fail part way (a frozen holder): what it held goes back
      if (core().put(message, until, keep_waiting))
        return true;
    } catch (...) {
      store.release_for_queue();
      throw;
    }
    store.release_for_queue();
    return false;
  }

  std::optional<T> receive(detail::deadline until) {
    T value{};
    if (!receive_into(value, until))
      return std::nullopt;
    return value;
  }

  bool receive_into(T& value, detail::deadline until) {
    auto message = core().get(until);
    if (!message)
      return false;
    detail::segment_store store{core()};
    detail::tensor_store_scope scope{store};
    deserialize_into(*message, value);
    return true;
  }

  /// The queue; state_error for a handle moved from.
  detail::byte_queue& core() const {
    if (!core_)
      detail::throw_empty_handle("troupe::queue", "a put, get or query");
    return *core_;
  }

  std::unique_ptr<detail::byte_queue> core_;
};

} // namespace troupe
