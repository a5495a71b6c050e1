#include "troupe/queues/shm_segment.hpp"
#include "troupe/actors/detail/readable.hpp"

#include "shm.hpp"

#include "troupe/actors/error.hpp"
#include "troupe/queues/detail/byte_queue.hpp"

#include <dirent.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>

namespace troupe {

namespace detail {

bool queue_instance_alive(const std::string& name, std::uint64_t id); // byte_queue.cpp

namespace {

constexpr std::array<char, 8> segment_magic{'t', 'r', 'o', 'u', 'p', 'e', 'S', '2'};
constexpr std::size_t header_bytes = 16384; // payload starts page-aligned after it

enum class holder_kind : std::uint32_t { none = 0, process = 1, queue = 2 };

struct holder {
  holder_kind kind;
  std::uint32_t count;
  process_id process;
  std::uint64_t queue_id;
  // Every valid queue's object name fits, with its terminating zero: a shortened one would make
  // the holder look dead and its segment be collected while the message waits.
  char queue_name[std::char_traits<char>::length(queue_prefix) + max_queue_name_length + 1];

  bool is_process(const process_id& p) const {
    return kind == holder_kind::process && process == p;
  }
  bool is_queue(const std::string& name, std::uint64_t id) const {
    return kind == holder_kind::queue && queue_id == id && name == queue_name;
  }
  bool alive() const {
    switch (kind) {
    case holder_kind::process: return process.alive();
    case holder_kind::queue: return queue_instance_alive(queue_name, queue_id);
    default: return false;
    }
  }
};

struct segment_header {
  std::atomic<std::uint64_t> magic; // written last: a segment without it is being created
  std::uint64_t payload_bytes;
  pthread_mutex_t mutex;
  std::array<holder, 32> holders;
  std::byte user[shm_segment::user_header_bytes];
};
static_assert(sizeof(segment_header) <= header_bytes);

std::uint64_t magic_word() {
  std::uint64_t word;
  std::memcpy(&word, segment_magic.data(), sizeof word);
  return word;
}

/// Adds `delta` holds to the holder matching `match`, creating it with `make` if absent.
/// Returns false if the table is full.
template <class Match, class Make>
bool add_hold(segment_header& h, Match&& match, Make&& make) {
  for (auto& x : h.holders)
    if (x.kind != holder_kind::none && match(x)) {
      ++x.count;
      return true;
    }
  for (auto& x : h.holders)
    if (x.kind == holder_kind::none) {
      x = make();
      x.count = 1;
      return true;
    }
  return false;
}

/// Drops one hold of the matching holder. True if no holder is left at all.
template <class Match>
bool drop_hold(segment_header& h, Match&& match) {
  for (auto& x : h.holders)
    if (x.kind != holder_kind::none && match(x) && --x.count == 0)
      x.kind = holder_kind::none;
  for (auto& x : h.holders)
    if (x.kind != holder_kind::none)
      return false;
  return true;
}

/// How long anyone waits for a segment's holder table. Its critical sections are a few
/// instructions long, so only a holder frozen (SIGSTOP) inside one makes this pass; then a hold
/// is not taken (an error) or not released (the segment waits for its orphan collection), and
/// nobody hangs.
constexpr auto holders_patience = std::chrono::seconds{1};

robust_lock lock_holders(segment_header& h) {
  return robust_lock{h.mutex, [] {}, std::chrono::steady_clock::now() + holders_patience};
}

std::string unique_segment_name() {
  static std::atomic<std::uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::string{segment_prefix} + std::to_string(process_id::self().pid) + "." +
         std::to_string(counter++) + "." + std::to_string(rng() % 1000000);
}

} // namespace

/// One mapping of a segment in this process; its destruction releases this process's hold.
struct segment_mapping {
  segment_mapping(std::string n, mapped_object o) : name(std::move(n)), object(std::move(o)) {}
  segment_mapping(const segment_mapping&) = delete;
  segment_mapping& operator=(const segment_mapping&) = delete;

  std::string name;
  mapped_object object;

  segment_header& header() const { return *static_cast<segment_header*>(object.base); }

  ~segment_mapping() {
    if (object.base == nullptr)
      return;
    auto& h = header();
    bool last = false;
    {
      auto lock = lock_holders(h);
      const auto me = process_id::self();
      if (lock.owns()) // else our hold stays, and goes with us when we are gone
        last = drop_hold(h, [&](const holder& x) { return x.is_process(me); });
    }
    if (last)
      shm_unlink(("/" + name).c_str());
  }
};

} // namespace detail

shm_segment shm_segment::create(std::size_t bytes) {
  using namespace detail;
  for (int attempt = 0; attempt < 8; ++attempt) {
    auto name = unique_segment_name();
    auto object = create_object(name, header_bytes + std::max<std::size_t>(bytes, 1), true);
    if (!object)
      continue;
    auto& h = *static_cast<segment_header*>(object->base);
    h.payload_bytes = bytes;
    init_robust_mutex(h.mutex);
    h.holders[0].kind = holder_kind::process;
    h.holders[0].count = 1;
    h.holders[0].process = process_id::self();
    h.magic.store(magic_word(), std::memory_order_release);
    return shm_segment{std::make_shared<segment_mapping>(name, std::move(*object))};
  }
  throw invalid_argument("cannot create a shared-memory segment of " + readable_bytes(bytes) +
                         ": no free name after 8 attempts");
}

shm_segment shm_segment::open(const std::string& name) {
  using namespace detail;
  auto object = open_object(name);
  if (!object)
    throw invalid_argument("no shared-memory segment named " + name);
  if (object->size < header_bytes)
    throw serialization_error("shared-memory object " + name + " is not a troupe segment");
  auto& h = *static_cast<segment_header*>(object->base);
  if (h.magic.load(std::memory_order_acquire) != magic_word() ||
      h.payload_bytes > object->size - header_bytes)
    throw serialization_error("shared-memory object " + name + " is not a troupe segment");
  {
    auto lock = lock_holders(h);
    if (!lock.owns())
      throw timeout_error("segment " + name + " stayed locked: a process using it is frozen");
    const auto me = process_id::self();
    if (!add_hold(
          h, [&](const holder& x) { return x.is_process(me); },
          [&] {
            return holder{holder_kind::process, 0, me, 0, {}};
          }))
      throw invalid_argument("segment " + name + " has too many holders");
  }
  return shm_segment{std::make_shared<segment_mapping>(name, std::move(*object))};
}

detail::segment_mapping& shm_segment::mapping() const {
  if (!mapping_)
    detail::throw_empty_handle("troupe::shm_segment", "a use");
  return *mapping_;
}

shm_segment shm_segment::share() const {
  (void)mapping();
  return shm_segment{mapping_};
}

const std::string& shm_segment::name() const { return mapping().name; }

std::byte* shm_segment::data() const {
  return static_cast<std::byte*>(mapping().object.base) + detail::header_bytes;
}

std::size_t shm_segment::size() const { return mapping().header().payload_bytes; }

std::byte* shm_segment::user_header() const { return mapping().header().user; }

bool shm_segment::shared_with_others() const {
  using namespace detail;
  auto& h = mapping().header();
  auto lock = lock_holders(h);
  if (!lock.owns())
    return true; // someone else is using it right now, frozen or not
  const auto me = process_id::self();
  return std::any_of(h.holders.begin(), h.holders.end(), [&](const holder& x) {
    return x.kind != holder_kind::none && !x.is_process(me);
  });
}

void shm_segment::hold_for_queue(const std::string& queue_name, std::uint64_t queue_id) {
  using namespace detail;
  auto& h = mapping().header();
  auto lock = lock_holders(h);
  if (!lock.owns())
    throw timeout_error("segment " + name() + " stayed locked: a process using it is frozen");
  if (!add_hold(
        h, [&](const holder& x) { return x.is_queue(queue_name, queue_id); },
        [&] {
          holder x{holder_kind::queue, 0, {}, queue_id, {}};
          std::strncpy(x.queue_name, queue_name.c_str(), sizeof x.queue_name - 1);
          return x;
        }))
    throw invalid_argument("segment " + name() + " has too many holders");
}

void shm_segment::release_for_queue(const std::string& queue_name, std::uint64_t queue_id) {
  using namespace detail;
  auto& h = mapping().header();
  // Never the last hold: this process still maps the segment and holds it too. Not released
  // (a frozen holder of the lock), the queue's hold goes when the queue does.
  if (auto lock = lock_holders(h); lock.owns())
    drop_hold(h, [&](const holder& x) { return x.is_queue(queue_name, queue_id); });
}

bool shm_object_exists(const std::string& name) { return detail::open_object(name, 1).has_value(); }

namespace detail {

std::int32_t creator_pid_of_segment(const std::string& name) {
  const auto pid = std::atol(name.c_str() + std::char_traits<char>::length(segment_prefix));
  return pid > 0 && pid <= std::numeric_limits<std::int32_t>::max() ? static_cast<std::int32_t>(pid)
                                                                    : 0;
}

namespace {

/// A segment still being made has no magic yet; one whose maker died then never will.
bool unfinished_and_abandoned(const std::string& name) {
  const auto pid = creator_pid_of_segment(name);
  return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

/// Forgets holders that are gone; true if none is left.
bool no_living_holder(segment_header& h) {
  bool orphan = true;
  // Never waits: a segment whose lock someone holds right now is in use, not an orphan, and a
  // sweep of /dev/shm must not stall on each segment a frozen process holds.
  robust_lock lock{h.mutex, [] {}, std::chrono::steady_clock::now()};
  if (!lock.owns())
    return false;
  for (auto& x : h.holders)
    if (x.kind != holder_kind::none) {
      if (x.alive())
        orphan = false;
      else
        x.kind = holder_kind::none;
    }
  return orphan;
}

} // namespace
} // namespace detail

std::size_t collect_orphan_segments() {
  using namespace detail;
  // Queues first: the segments held only by a queue that goes now are orphans in this sweep.
  collect_orphan_queues();
  std::size_t freed = 0;
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr)
    return 0;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind(segment_prefix, 0) != 0)
      continue;
    // nullopt for an empty one (its size was never set)
    auto object = open_object(name, header_bytes);
    bool orphan;
    if (!object || object->size < header_bytes ||
        static_cast<segment_header*>(object->base)->magic.load(std::memory_order_acquire) !=
          magic_word())
      orphan = unfinished_and_abandoned(name);
    else
      orphan = no_living_holder(*static_cast<segment_header*>(object->base));
    if (orphan && shm_unlink(("/" + name).c_str()) == 0)
      ++freed;
  }
  closedir(dir);
  return freed;
}

namespace detail {

void collect_orphans_now_and_then() {
  // A sweep opens every troupe object in /dev/shm: run on each queue opened, it made the
  // processes of a world of 256 on two cores sweep tens of thousands of objects while forming
  // (most of the machine's time, and the heartbeats late). A crashed process's objects wait a
  // second longer at most; collect_orphan_segments() still sweeps at once when asked.
  using std::chrono::milliseconds;
  static std::atomic<std::int64_t> last_sweep{std::numeric_limits<std::int64_t>::min() / 2};
  constexpr std::int64_t every = milliseconds{std::chrono::seconds{1}}.count();
  const std::int64_t now =
    std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
  auto last = last_sweep.load(std::memory_order_relaxed);
  if (now - last < every || !last_sweep.compare_exchange_strong(last, now))
    return;
  collect_orphan_segments();
}

} // namespace detail
} // namespace troupe
