// The ring: a header (guarded by a robust process-shared mutex), an array of message
// descriptors, and a circular data area. Messages [head, tail) are in the queue; message i's
// bytes are [desc[i % N].start, desc[i % N].end) of the data area (byte positions grow
// without bound; the area is indexed modulo its size).
//
// Crash safety: every change is made under the mutex and committed by advancing `tail` (put)
// or `head` (get) last, so a process that dies inside either leaves the queue as if it had not
// started (put), or with the message still there for another receiver (get) unless it already
// committed. The next locker gets EOWNERDEAD and rebuilds the derived byte positions from the
// descriptors. Waiting is done on futexes, which keep no per-waiter state a dead waiter could
// leave behind. Every lock and wait has a deadline when the caller gives one: a peer frozen
// while holding the mutex costs its peers a timeout, never their liveness.
//
// Large messages: one bigger than a quarter of the data area is written into a segment of its
// own, held for the queue like a tensor's, and the ring carries only the segment's name (a
// descriptor marked `spilled`). So no message is too large for the ring, and one huge message
// never starves the small ones behind it.
#include "troupe/queues/detail/byte_queue.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "shm.hpp"

#include "troupe/actors/detail/idle_cores.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/queues/shm_segment.hpp"

#include <dirent.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

namespace troupe::detail {

// The queue's layout in shared memory. A namespace with a name, not an anonymous one: byte_queue's
// state, a class other files name, holds pointers into it.
namespace queue_layout {

constexpr std::uint64_t descriptor_salt = 0x9E3779B97F4A7C15ULL;

struct descriptor {
  std::uint64_t start, end;
  std::uint64_t spilled; // 1: the bytes in the ring are the name of the segment holding the message
  std::uint64_t check; // hash of the fields above, to spot a scribbled descriptor

  static std::uint64_t checksum(std::uint64_t start, std::uint64_t end, std::uint64_t spilled) {
    return (start * descriptor_salt) ^ (end + 0x632BE59BD9B4E019ULL) ^ 0xD6E8FEB86659FD93ULL ^
           (spilled * 0xA24BAED4963EE407ULL);
  }
  bool valid() const {
    return check == checksum(start, end, spilled) && end >= start && spilled <= 1;
  }
};

struct queue_header {
  std::atomic<std::uint64_t> magic; // written last by the creator
  std::uint64_t instance_id;
  std::uint64_t type_tag;
  char type_name[240];
  std::uint64_t max_messages, data_bytes, large_tensor_bytes, max_message_bytes;
  process_id creator;
  std::uint32_t owned_by_creator;
  pthread_mutex_t mutex;
  // Under the mutex (closed is also set without it by a close() that could not get it):
  std::uint64_t head, tail; // message indices
  std::uint64_t data_head, data_tail; // byte positions
  std::atomic<std::uint32_t> closed;
  std::uint32_t readers_waiting, writers_waiting; // hints: over-counting only costs a wake-up
  // Futex words, bumped under the mutex when messages arrive / leave or the queue closes.
  std::atomic<std::uint32_t> arrived, left;
  // Spare copy-mode segments, each held for this queue (under the mutex).
  std::uint32_t spare_limit, spare_count;
  struct spare {
    char name[64];
    std::uint64_t bytes;
  } spares[16];
};

} // namespace queue_layout

using queue_layout::descriptor;
using queue_layout::queue_header;

namespace {

constexpr std::array<char, 8> queue_magic{'t', 'r', 'o', 'u', 'p', 'e', 'Q', '2'};

std::size_t data_area_bytes(const queue_options& o) { return (o.max_bytes + 63) / 64 * 64; }

} // namespace

void validate_queue_name(const std::string& name) {
  const bool ok =
    !name.empty() && name.size() <= max_queue_name_length &&
    std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    });
  if (!ok)
    throw invalid_argument("queue name '" + name +
                           "' is invalid: use 1-200 characters of A-Z a-z 0-9 . _ -");
}

struct byte_queue::state {
  std::string name; // the user's name
  std::string object_name; // troupe.q.<name>
  queue_options options;
  mapped_object object;
  // This process's mappings of copy-mode segments, most recently used last.
  std::mutex cache_mutex;
  std::vector<shm_segment> cache;
  std::atomic<bool> spin_while_waiting{true}; // this handle's; see queue::spin_while_waiting
  queue_header* header = nullptr;
  descriptor* descriptors = nullptr;
  std::byte* data = nullptr;

  void bind() {
    header = static_cast<queue_header*>(object.base);
    descriptors = reinterpret_cast<descriptor*>(header + 1);
    data = reinterpret_cast<std::byte*>(descriptors + header->max_messages);
  }

  descriptor& desc(std::uint64_t index) { return descriptors[index % header->max_messages]; }

  void copy_in(std::uint64_t position, const std::byte* from, std::size_t bytes) {
    const auto size = header->data_bytes;
    const auto offset = position % size;
    const auto first = std::min<std::size_t>(bytes, size - offset);
    std::memcpy(data + offset, from, first);
    std::memcpy(data, from + first, bytes - first);
  }

  void copy_out(std::uint64_t position, std::byte* to, std::size_t bytes) const {
    const auto size = header->data_bytes;
    const auto offset = position % size;
    const auto first = std::min<std::size_t>(bytes, size - offset);
    std::memcpy(to, data + offset, first);
    std::memcpy(to + first, data, bytes - first);
  }

  /// After a holder of the mutex died: rebuild what is derived from head, tail and descriptors.
  void recover() {
    auto& h = *header;
    if (h.tail < h.head || h.tail - h.head > h.max_messages)
      h.tail = h.head; // cannot trust anything between them
    if (h.tail > h.head) {
      if (const auto& first = desc(h.head); first.valid())
        h.data_head = first.start;
      if (const auto& last = desc(h.tail - 1); last.valid())
        h.data_tail = last.end;
    } else {
      h.data_tail = h.data_head;
    }
    if (h.data_tail < h.data_head || h.data_tail - h.data_head > h.data_bytes)
      h.data_tail = h.data_head;
    if (h.spare_count > std::size(h.spares))
      h.spare_count = 0; // the spares leak until the queue goes; the ring works
  }

  robust_lock lock(deadline until = std::nullopt) {
    return robust_lock{header->mutex, [this] { recover(); }, until};
  }

  /// Messages above this travel in a segment of their own.
  std::size_t spill_threshold() const { return header->data_bytes / 4; }

  void check_size(std::size_t bytes) const {
    if (header->max_message_bytes != 0 && bytes > header->max_message_bytes)
      throw capacity_error("a message of " + readable_bytes(bytes) + " is larger than queue '" +
                           name + "' takes (max_message_bytes " +
                           readable_bytes(header->max_message_bytes) + ")");
  }

  bool put_in_ring(std::span<const std::byte> message, bool spilled, deadline until,
                   const std::function<bool()>& keep_waiting);
  std::optional<std::pair<std::vector<std::byte>, bool>> get_from_ring(deadline until);
  bool put_spilled(std::span<const std::byte> message, deadline until,
                   const std::function<bool()>& keep_waiting);
  std::vector<std::byte> take_spilled(const std::vector<std::byte>& segment_name);
};

/// Before sleeping on a futex, watch it for up to 50 us: in a stream, the other side usually
/// moves within that time, and neither side then pays a sleep and a wake-up. Bounded in time,
/// not in `pause`s (5 ns on some processors, 25 ns on this one), and only while a core is idle
/// for it (idle_cores.hpp): on a busy machine the waiter sleeps at once.
bool spin_until_changed(const std::atomic<std::uint32_t>& word, std::uint32_t seen) {
  return spin_while_idle([&] { return word.load(std::memory_order_acquire) != seen; },
                         std::chrono::microseconds{50});
}

/// Waits, with `lock` released, until `word` moves or `until` passes; `waiting` counts this
/// waiter (under the lock) so that the other side knows to wake it. Returns holding the lock,
/// or false without it if `until` passed while waiting for the lock (a stale count in `waiting`
/// then costs the other side only a wake-up).
bool wait_for_change(robust_lock& lock, std::atomic<std::uint32_t>& word, std::uint32_t& waiting,
                     deadline until, bool spin) {
  const auto seen = word.load();
  lock.unlock();
  if (spin && spin_until_changed(word, seen))
    return lock.relock(until);
  if (!lock.relock(until))
    return false;
  ++waiting;
  const auto again = word.load();
  lock.unlock();
  if (again == seen)
    futex_wait(word, seen, until);
  if (!lock.relock(until))
    return false;
  --waiting;
  return true;
}

byte_queue::byte_queue(const std::string& name, mode how, const queue_options& options,
                       std::uint64_t type_tag, const std::string& type_name)
  : state_(std::make_unique<state>()) {
  validate_queue_name(name);
  if (options.max_messages < 1 || options.max_bytes < 64)
    throw invalid_argument("queue_options: max_messages must be >= 1 and max_bytes >= 64, got " +
                           std::to_string(options.max_messages) + " and " +
                           std::to_string(options.max_bytes));
  auto& s = *state_;
  s.name = name;
  s.object_name = std::string{queue_prefix} + name;
  collect_orphans_now_and_then();

  if (how != mode::open) {
    const auto data_bytes = data_area_bytes(options);
    const auto bytes =
      sizeof(queue_header) + options.max_messages * sizeof(descriptor) + data_bytes;
    if (auto created = create_object(s.object_name, bytes)) {
      s.object = std::move(*created);
      auto& h = *static_cast<queue_header*>(s.object.base);
      h.instance_id =
        std::random_device{}() * 0x100000001ULL ^
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
      h.type_tag = type_tag;
      std::strncpy(h.type_name, type_name.c_str(), sizeof h.type_name - 1);
      h.max_messages = options.max_messages;
      h.data_bytes = data_bytes;
      h.large_tensor_bytes = options.large_tensor_bytes;
      h.max_message_bytes = options.max_message_bytes;
      h.creator = process_id::self();
      h.owned_by_creator = options.owned_by_creator ? 1 : 0;
      h.spare_limit = static_cast<std::uint32_t>(
        std::min<std::size_t>(options.spare_segments, std::size(h.spares)));
      init_robust_mutex(h.mutex);
      std::uint64_t word;
      std::memcpy(&word, queue_magic.data(), sizeof word);
      h.magic.store(word, std::memory_order_release);
      s.bind();
      s.options = options;
      return;
    }
    if (how == mode::create)
      throw invalid_argument("queue '" + name +
                             "' already exists (open it, or create it with open_or_create)");
  }

  // Open: the creator may still be initialising; give it a moment.
  std::uint64_t word;
  std::memcpy(&word, queue_magic.data(), sizeof word);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds{2};
  for (;;) {
    auto opened = open_object(s.object_name);
    if (opened && opened->size >= sizeof(queue_header) &&
        static_cast<queue_header*>(opened->base)->magic.load(std::memory_order_acquire) == word) {
      s.object = std::move(*opened);
      break;
    }
    if (!opened && !shm_object_exists(s.object_name))
      throw invalid_argument("no queue named '" + name + "'");
    if (std::chrono::steady_clock::now() > give_up)
      throw serialization_error("shared-memory object for queue '" + name +
                                "' is not a troupe queue");
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  }
  auto& h = *static_cast<queue_header*>(s.object.base);
  if (h.type_tag != type_tag)
    throw serialization_error("queue '" + name + "' carries " + std::string{h.type_name} +
                              ", but was opened as a queue of " + type_name);
  s.bind();
  s.options.max_messages = h.max_messages;
  s.options.max_bytes = h.data_bytes;
  s.options.large_tensor_bytes = h.large_tensor_bytes;
  s.options.spare_segments = h.spare_limit;
  s.options.max_message_bytes = h.max_message_bytes;
  s.options.owned_by_creator = h.owned_by_creator != 0;
}

byte_queue::~byte_queue() = default;

bool byte_queue::put(std::span<const std::byte> message, deadline until,
                     const std::function<bool()>& keep_waiting) {
  auto& s = *state_;
  s.check_size(message.size());
  if (message.size() > s.spill_threshold())
    return s.put_spilled(message, until, keep_waiting);
  return s.put_in_ring(message, false, until, keep_waiting);
}

namespace {

/// How often a put that waits asks its keep_waiting whether to go on.
constexpr auto keep_waiting_interval = std::chrono::milliseconds{20};

/// The deadline of one wait: `until`, or sooner when keep_waiting must be asked again.
deadline next_check(deadline until, const std::function<bool()>& keep_waiting) {
  if (!keep_waiting)
    return until;
  const auto soon = std::chrono::steady_clock::now() + keep_waiting_interval;
  return until ? std::min(*until, soon) : soon;
}

bool passed(deadline until) { return until && std::chrono::steady_clock::now() >= *until; }

} // namespace

bool byte_queue::state::put_in_ring(std::span<const std::byte> message, bool spilled,
                                    deadline until, const std::function<bool()>& keep_waiting) {
  auto& h = *header;
  const auto go_on = [&] { return !passed(until) && keep_waiting && keep_waiting(); };
  auto lock = this->lock(next_check(until, keep_waiting));
  while (!lock.owns()) {
    if (!go_on())
      return false;
    lock.relock(next_check(until, keep_waiting));
  }
  for (;;) {
    if (h.closed)
      throw queue_closed("queue '" + name + "' is closed");
    if (h.tail - h.head < h.max_messages &&
        h.data_tail - h.data_head + message.size() <= h.data_bytes)
      break;
    if (passed(until) || (keep_waiting && !keep_waiting()))
      return false;
    if (!wait_for_change(lock, h.left, h.writers_waiting, next_check(until, keep_waiting),
                         spin_while_waiting.load(std::memory_order_relaxed))) {
      do {
        if (!go_on())
          return false;
      } while (!lock.relock(next_check(until, keep_waiting)));
    }
  }
  const auto start = h.data_tail, end = start + message.size();
  copy_in(start, message.data(), message.size());
  desc(h.tail) = {start, end, spilled, descriptor::checksum(start, end, spilled)};
  ++h.tail; // the commit
  h.data_tail = end;
  h.arrived.fetch_add(1);
  const bool wake = h.readers_waiting > 0;
  lock.unlock();
  if (wake)
    futex_wake_all(h.arrived);
  return true;
}

bool byte_queue::state::put_spilled(std::span<const std::byte> message, deadline until,
                                    const std::function<bool()>& keep_waiting) {
  auto segment = shm_segment::create(message.size()); // capacity_error when memory is short
  std::memcpy(segment.data(), message.data(), message.size());
  segment.hold_for_queue(object_name, header->instance_id);
  const auto& segment_name = segment.name();
  bool sent = false;
  try {
    sent = put_in_ring(std::as_bytes(std::span{segment_name}), true, until, keep_waiting);
  } catch (...) {
    segment.release_for_queue(object_name, header->instance_id);
    throw;
  }
  if (!sent)
    segment.release_for_queue(object_name, header->instance_id);
  return sent; // our own hold goes with `segment`: the queue's keeps it for the receiver
}

std::optional<std::vector<std::byte>> byte_queue::get(deadline until) {
  auto& s = *state_;
  auto message = s.get_from_ring(until);
  if (!message)
    return std::nullopt;
  if (message->second)
    return s.take_spilled(message->first);
  return std::move(message->first);
}

std::optional<std::pair<std::vector<std::byte>, bool>>
byte_queue::state::get_from_ring(deadline until) {
  auto& h = *header;
  auto lock = this->lock(until);
  if (!lock.owns())
    return std::nullopt;
  while (h.tail == h.head) {
    if (h.closed)
      throw queue_closed("queue '" + name + "' is closed and drained");
    if (until && std::chrono::steady_clock::now() >= *until)
      return std::nullopt;
    if (!wait_for_change(lock, h.arrived, h.readers_waiting, until,
                         spin_while_waiting.load(std::memory_order_relaxed)))
      return std::nullopt;
  }
  // A scribbled descriptor loses only its own message: its extent is where the next one starts.
  auto start = h.data_head;
  auto end = h.data_tail;
  bool spilled = false;
  if (const auto& d = desc(h.head); d.valid() && d.start == h.data_head && d.end <= h.data_tail) {
    end = d.end;
    spilled = d.spilled != 0;
  } else if (h.tail - h.head > 1) {
    if (const auto& next = desc(h.head + 1);
        next.valid() && next.start >= start && next.start <= end)
      end = next.start;
  }
  std::vector<std::byte> message(end - start);
  copy_out(start, message.data(), message.size());
  ++h.head; // the commit
  h.data_head = end;
  h.left.fetch_add(1);
  const bool wake = h.writers_waiting > 0;
  lock.unlock();
  if (wake)
    futex_wake_all(h.left);
  return std::pair{std::move(message), spilled};
}

std::vector<std::byte> byte_queue::state::take_spilled(const std::vector<std::byte>& segment_name) {
  const std::string handle(reinterpret_cast<const char*>(segment_name.data()), segment_name.size());
  auto segment = [&] {
    try {
      return shm_segment::open(handle);
    } catch (const invalid_argument&) {
      throw serialization_error("a message on queue '" + name + "' was kept in segment " + handle +
                                ", which no longer exists");
    }
  }();
  std::vector<std::byte> message(segment.size());
  if (!message.empty())
    std::memcpy(message.data(), segment.data(), message.size());
  segment.release_for_queue(object_name, header->instance_id);
  return message; // with `segment` goes the last hold: the segment is unlinked
}

void byte_queue::close() {
  auto& h = *state_->header;
  // A peer frozen while holding the lock must not keep the queue open: after a while, close
  // without the lock (closed is atomic, and every waiter re-checks it when it wakes).
  {
    auto lock = state_->lock(std::chrono::steady_clock::now() + std::chrono::seconds{1});
    h.closed.store(1);
    h.arrived.fetch_add(1);
    h.left.fetch_add(1);
  }
  futex_wake_all(h.arrived);
  futex_wake_all(h.left);
}

bool byte_queue::closed() const { return state_->header->closed.load() != 0; }

std::size_t byte_queue::size() const {
  auto lock = state_->lock(std::chrono::steady_clock::now() + std::chrono::seconds{1});
  if (!lock.owns())
    throw timeout_error("queue '" + state_->name +
                        "' stayed locked for a second: a process "
                        "using it is frozen");
  return static_cast<std::size_t>(state_->header->tail - state_->header->head);
}

void byte_queue::unlink() {
  shm_unlink(("/" + state_->object_name).c_str());
  {
    std::lock_guard guard{state_->cache_mutex};
    state_->cache.clear();
  }
  // Segments held only by this queue's spares and messages are orphans now.
  collect_orphan_segments();
}

namespace {
constexpr std::size_t cache_limit = 32;
// Spares are an optimisation: never wait long for a queue's lock to use one.
constexpr auto spare_lock_patience = std::chrono::milliseconds{100};
} // namespace

shm_segment byte_queue::new_segment(std::size_t bytes) {
  auto segment = shm_segment::create(bytes);
  // The mapping is kept only while the segment may come back as a spare: a cached mapping is a
  // hold, and one kept past the receiver's release would keep the memory for nothing.
  if (state_->header->spare_limit == 0)
    return segment;
  std::lock_guard guard{state_->cache_mutex};
  auto& cache = state_->cache;
  std::erase_if(cache, [](const shm_segment& x) { return !x.shared_with_others(); });
  if (cache.size() >= cache_limit)
    cache.erase(cache.begin());
  cache.push_back(segment.share());
  return segment;
}

shm_segment byte_queue::segment(const std::string& name) {
  std::lock_guard guard{state_->cache_mutex};
  auto& cache = state_->cache;
  auto it = std::find_if(cache.begin(), cache.end(),
                         [&](const shm_segment& x) { return x.name() == name; });
  if (it != cache.end()) {
    auto found = it->share();
    std::rotate(it, it + 1, cache.end()); // most recently used last
    return found;
  }
  auto opened = shm_segment::open(name);
  if (cache.size() >= cache_limit)
    cache.erase(cache.begin());
  cache.push_back(opened.share());
  return opened;
}

std::optional<shm_segment> byte_queue::take_spare(std::size_t bytes) {
  auto& h = *state_->header;
  std::string name;
  {
    auto lock = state_->lock(std::chrono::steady_clock::now() + spare_lock_patience);
    if (!lock.owns())
      return std::nullopt; // a frozen peer holds the queue: a new segment does as well
    for (std::uint32_t i = 0; i < h.spare_count; ++i)
      if (h.spares[i].bytes >= bytes && h.spares[i].bytes <= 2 * bytes + 4096) {
        name = h.spares[i].name;
        h.spares[i] = h.spares[--h.spare_count];
        break;
      }
  }
  if (name.empty())
    return std::nullopt;
  try {
    return segment(name);
  } catch (const error&) {
    return std::nullopt; // freed meanwhile (its queue hold was stale): use a new one
  }
}

bool byte_queue::offer_spare(const shm_segment& segment) {
  auto& h = *state_->header;
  auto lock = state_->lock(std::chrono::steady_clock::now() + spare_lock_patience);
  if (!lock.owns() || h.closed || h.spare_count >= h.spare_limit ||
      segment.name().size() >= sizeof h.spares[0].name)
    return false;
  auto& slot = h.spares[h.spare_count++];
  std::strncpy(slot.name, segment.name().c_str(), sizeof slot.name - 1);
  slot.name[sizeof slot.name - 1] = '\0';
  slot.bytes = segment.size();
  return true;
}

void byte_queue::forget(const std::string& name) {
  std::lock_guard guard{state_->cache_mutex};
  std::erase_if(state_->cache, [&](const shm_segment& x) { return x.name() == name; });
}

void byte_queue::spin_while_waiting(bool on) noexcept {
  state_->spin_while_waiting.store(on, std::memory_order_relaxed);
}

const std::string& byte_queue::name() const noexcept { return state_->name; }
const std::string& byte_queue::object_name() const noexcept { return state_->object_name; }
std::uint64_t byte_queue::instance_id() const noexcept { return state_->header->instance_id; }
const queue_options& byte_queue::options() const noexcept { return state_->options; }

std::size_t collect_orphan_queues() {
  std::size_t freed = 0;
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr)
    return 0;
  std::uint64_t magic;
  std::memcpy(&magic, queue_magic.data(), sizeof magic);
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind(queue_prefix, 0) != 0)
      continue;
    auto object = open_object(name, sizeof(queue_header));
    if (!object || object->size < sizeof(queue_header))
      continue;
    const auto& h = *static_cast<const queue_header*>(object->base);
    if (h.magic.load(std::memory_order_acquire) == magic && h.owned_by_creator != 0 &&
        !h.creator.alive() && shm_unlink(("/" + name).c_str()) == 0)
      ++freed;
  }
  closedir(dir);
  return freed;
}

bool queue_instance_alive(const std::string& object_name, std::uint64_t id) {
  auto object = open_object(object_name, sizeof(queue_header));
  if (!object || object->size < sizeof(queue_header))
    return false;
  return static_cast<queue_header*>(object->base)->instance_id == id;
}

} // namespace troupe::detail
