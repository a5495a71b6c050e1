// host_barrier.hpp: the shared object, arriving, waiting, and failing.
#include "host_barrier.hpp"

#include "troupe/actors/detail/idle_cores.hpp"
#include "troupe/actors/error.hpp"
#include "troupe/queues/detail/futex.hpp"
#include "troupe/queues/detail/process_id.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace troupe::detail {

namespace {

/// How often a waiter looks at the membership and at its world: a lost member is usually
/// reported at once (fail() from a lost callback); one that left, or a stopped world, within this.
constexpr std::chrono::milliseconds look_every{100};
/// How long a waiter may watch before it sleeps, while a core is idle for it (idle_cores.hpp).
constexpr std::chrono::microseconds watch_for{50};

/// The objects' names in /dev/shm begin so (the queues' and segments' begin otherwise).
constexpr const char* object_prefix = "troupe.b.";

/// Failure words: the gone member's rank + 1 in the low bits, the first barrier it failed above.
constexpr unsigned rank_bits = 24;
constexpr std::uint64_t rank_mask = (std::uint64_t{1} << rank_bits) - 1;

std::uint64_t failure_word(int rank, std::uint64_t from) {
  return from << rank_bits | (static_cast<std::uint64_t>(rank) + 1);
}

/// The object's name: the world's id, and the group's name and members hashed (FNV-1a; a
/// group's name may be longer than a name in /dev/shm may). A member that makes the group with
/// other members than the rest opens an object of its own, which the group's creation refuses,
/// and which it takes away without touching theirs.
std::string object_name(const std::string& world_id, const std::string& group,
                        const std::vector<int>& ranks) {
  std::uint64_t hash = 14695981039346656037ull;
  const auto mix = [&hash](unsigned char c) { hash = (hash ^ c) * 1099511628211ull; };
  for (const unsigned char c : group)
    mix(c);
  for (const int rank : ranks)
    for (int shift = 0; shift < 32; shift += 8)
      mix(static_cast<unsigned char>(static_cast<std::uint32_t>(rank) >> shift));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return std::string{"/"} + object_prefix + world_id + "." + hex;
}

[[noreturn]] void cannot_open(const std::string& name, const char* step) {
  throw state_error("a group's barriers meet in shared memory (" + name + "), and " + step +
                    " failed: " + std::strerror(errno) +
                    " (world_options::host_barriers false meets them along a tree instead)");
}

} // namespace

/// One barrier's slot: the members counted so far, the last barrier met here, and the word its
/// waiters sleep on. A cache line each: members arriving at one barrier do not stall another's.
struct alignas(64) host_barrier::slot_state {
  std::atomic<std::uint32_t> arrived;
  std::atomic<std::uint32_t> wakes;
  std::atomic<std::uint64_t> met;
};

/// What the object keeps of each member, by its place in the group.
struct host_barrier::member_record {
  std::atomic<std::uint64_t> arrived_at; // the last barrier it arrived at
  std::atomic<std::int32_t> pid; // its process, once it opened the object (0: not yet)
  std::int32_t unused;
  std::uint64_t start_time; // with the pid, its process_id (written before the pid)
};

/// The shared object; zero-filled when made, which is every field's starting value.
struct host_barrier::layout {
  std::atomic<std::uint64_t> members; // set by the first to open it
  std::atomic<std::uint64_t> failure; // failure_word(); 0: none
  slot_state slot[slots];
  // Then a member_record for each member (record()).
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free &&
              std::atomic<std::uint32_t>::is_always_lock_free);

std::size_t host_barrier::bytes_for(std::size_t members) noexcept {
  return sizeof(layout) + members * sizeof(member_record);
}

/// Whether the object at `base` (`size` bytes) names processes, every one of them gone.
bool host_barrier::orphaned(const void* base, std::size_t size) noexcept {
  if (size < sizeof(layout))
    return false;
  const auto& header = *static_cast<const layout*>(base);
  const auto members = header.members.load(std::memory_order_acquire);
  if (members == 0 || bytes_for(members) != size)
    return false; // being made, or not one of ours
  const auto* records = reinterpret_cast<const member_record*>(&header + 1);
  bool named = false;
  for (std::size_t place = 0; place < members; ++place)
    if (const auto pid = records[place].pid.load(std::memory_order_acquire); pid > 0) {
      if (process_id{pid, records[place].start_time}.alive())
        return false;
      named = true;
    }
  return named;
}

void host_barrier::collect_orphans() noexcept {
  // At most once a second in a process: groups are made in bursts, and the sweep reads /dev/shm.
  static std::atomic<std::int64_t> last_sweep{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  const auto second =
    std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::seconds{1})
      .count();
  auto last = last_sweep.load();
  if (now - last < second || !last_sweep.compare_exchange_strong(last, now))
    return;
  DIR* dir = ::opendir("/dev/shm");
  if (dir == nullptr)
    return;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = std::string{"/"} + entry->d_name;
    if (name.rfind(std::string{"/"} + object_prefix, 0) != 0)
      continue;
    const int fd = ::shm_open(name.c_str(), O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
      continue;
    struct stat status {};
    void* base = MAP_FAILED;
    if (::fstat(fd, &status) == 0 && status.st_size > 0)
      base =
        ::mmap(nullptr, static_cast<std::size_t>(status.st_size), PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (base == MAP_FAILED)
      continue;
    if (orphaned(base, static_cast<std::size_t>(status.st_size)))
      ::shm_unlink(name.c_str());
    ::munmap(base, static_cast<std::size_t>(status.st_size));
  }
  ::closedir(dir);
}

std::shared_ptr<host_barrier> host_barrier::open(const std::string& world_id,
                                                 const std::string& group, std::vector<int> ranks,
                                                 int self) {
  const auto place = std::find(ranks.begin(), ranks.end(), self);
  if (place == ranks.end())
    throw invalid_argument("group '" + group + "': rank " + std::to_string(self) +
                           " is not one of its members");
  collect_orphans(); // objects of groups whose members all died while one was being made
  const auto self_at = static_cast<std::size_t>(place - ranks.begin());
  const auto name = object_name(world_id, group, ranks);
  const auto bytes = bytes_for(ranks.size());
  void* base = map_object(name, group, bytes, ranks.size());
  std::shared_ptr<host_barrier> barrier{
    new host_barrier(name, std::move(ranks), self_at, base, bytes)};
  std::uint64_t expected = 0;
  const auto members = static_cast<std::uint64_t>(barrier->ranks_.size());
  if (!barrier->shared_->members.compare_exchange_strong(expected, members) && expected != members)
    throw state_error("group '" + group + "': its barriers' shared object (" + name +
                      ") was made for " + std::to_string(expected) + " members, not " +
                      std::to_string(members));
  const auto me = process_id::self();
  auto& mine = barrier->record(self_at);
  mine.start_time = me.start_time;
  mine.pid.store(me.pid, std::memory_order_release);
  return barrier;
}

void* host_barrier::map_object(const std::string& name, const std::string& group, std::size_t bytes,
                               std::size_t members) {
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    cannot_open(name, "shm_open");
  struct stat status {};
  if (::fstat(fd, &status) != 0 ||
      (status.st_size == 0 && ::ftruncate(fd, static_cast<off_t>(bytes)) != 0)) {
    ::close(fd);
    cannot_open(name, "sizing it");
  }
  if (status.st_size != 0 && static_cast<std::size_t>(status.st_size) != bytes) {
    ::close(fd); // made for another number of members: mapping it as ours would reach past it
    const auto size = static_cast<std::size_t>(status.st_size);
    const auto theirs =
      size < sizeof(layout)
        ? std::string{"no group"}
        : std::to_string((size - sizeof(layout)) / sizeof(member_record)) + " members";
    throw state_error("group '" + group + "': its barriers' shared object (" + name +
                      ") was made for " + theirs + ", not " + std::to_string(members));
  }
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED)
    cannot_open(name, "mmap");
  return base;
}

host_barrier::host_barrier(std::string name, std::vector<int> ranks, std::size_t self, void* base,
                           std::size_t bytes)
  : name_(std::move(name)), ranks_(std::move(ranks)), self_(self),
    shared_(static_cast<layout*>(base)), bytes_(bytes) {}

host_barrier::~host_barrier() { ::munmap(shared_, bytes_); }

host_barrier::member_record& host_barrier::record(std::size_t place) const noexcept {
  return reinterpret_cast<member_record*>(shared_ + 1)[place];
}

void host_barrier::unlink() noexcept { ::shm_unlink(name_.c_str()); }

bool host_barrier::opened_by_all() const noexcept {
  for (std::size_t place = 0; place < ranks_.size(); ++place)
    if (record(place).pid.load(std::memory_order_acquire) == 0)
      return false;
  return true;
}

host_barrier::outcome host_barrier::meet(std::uint64_t n, std::optional<time_point> until,
                                         const watch& looks) {
  auto& slot = shared_->slot[(n - 1) % slots];
  outcome why = outcome::met;
  // The slot is free for n once n - slots was met there (this member timed out in between).
  if (n > slots && !wait_for(slot, n - slots, n, until, looks, why))
    return why;
  // Counted first: a member killed between the two steps fails the barrier rather than hangs it.
  if (slot.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == ranks_.size()) {
    record(self_).arrived_at.store(n, std::memory_order_release);
    slot.arrived.store(0, std::memory_order_relaxed);
    slot.met.store(n, std::memory_order_release); // after the reset: n + slots counts from 0
    slot.wakes.fetch_add(1, std::memory_order_release);
    futex_wake_all(slot.wakes);
    return outcome::met;
  }
  record(self_).arrived_at.store(n, std::memory_order_release);
  return wait_for(slot, n, n, until, looks, why) ? outcome::met : why;
}

bool host_barrier::wait_for(slot_state& slot, std::uint64_t target, std::uint64_t n,
                            std::optional<time_point> until, const watch& looks, outcome& why) {
  const auto met = [&] { return slot.met.load(std::memory_order_acquire) >= target; };
  if (spin_while_idle([&] { return met() || failed_by(n); }, watch_for) && met())
    return true;
  for (;;) {
    const auto seen = slot.wakes.load(std::memory_order_acquire);
    if (met())
      return true;
    if (looks.stopped()) { // before a failure: what a member out of its world sees is that
      why = outcome::stopped;
      return false;
    }
    if (failed_by(n)) {
      why = outcome::failed;
      return false;
    }
    if (const auto gone = looks.first_gone(missing_at(n))) {
      fail(*gone);
      continue; // failed_by(n) now, unless the barrier was met meanwhile
    }
    auto wake_by = std::chrono::steady_clock::now() + look_every;
    if (until) {
      if (std::chrono::steady_clock::now() >= *until) {
        why = outcome::timed_out;
        return false;
      }
      wake_by = std::min(wake_by, *until);
    }
    futex_wait(slot.wakes, seen, wake_by);
  }
}

std::vector<int> host_barrier::missing_at(std::uint64_t n) const {
  std::vector<int> missing;
  for (std::size_t place = 0; place < ranks_.size(); ++place)
    if (record(place).arrived_at.load(std::memory_order_acquire) < n)
      missing.push_back(ranks_[place]);
  return missing;
}

void host_barrier::fail(int rank) noexcept {
  const auto at = std::find(ranks_.begin(), ranks_.end(), rank);
  if (at == ranks_.end())
    return;
  const auto from = record(static_cast<std::size_t>(at - ranks_.begin()))
                      .arrived_at.load(std::memory_order_acquire) +
                    1;
  const auto word = failure_word(rank, from);
  // The earliest failure stands: a barrier fails if any gone member had not arrived at it.
  auto current = shared_->failure.load(std::memory_order_acquire);
  while ((current == 0 || (current >> rank_bits) > from) &&
         !shared_->failure.compare_exchange_weak(current, word, std::memory_order_acq_rel)) {
  }
  for (auto& slot : shared_->slot) {
    slot.wakes.fetch_add(1, std::memory_order_release);
    futex_wake_all(slot.wakes);
  }
}

std::optional<int> host_barrier::failed_by(std::uint64_t n) const noexcept {
  const auto word = shared_->failure.load(std::memory_order_acquire);
  if (word == 0 || n < (word >> rank_bits))
    return std::nullopt;
  return static_cast<int>((word & rank_mask) - 1);
}

void host_barriers::add(const std::shared_ptr<host_barrier>& barrier) {
  std::lock_guard guard{mutex_};
  std::erase_if(barriers_, [](const auto& known) { return known.expired(); });
  barriers_.push_back(barrier);
}

void host_barriers::unlink_at_stop(std::string name) {
  std::lock_guard guard{mutex_};
  names_to_unlink_.push_back(std::move(name));
}

void host_barriers::stop() noexcept {
  std::lock_guard guard{mutex_};
  for (const auto& name : names_to_unlink_)
    ::shm_unlink(name.c_str());
  names_to_unlink_.clear();
}

void host_barriers::lost(int rank) noexcept {
  std::vector<std::shared_ptr<host_barrier>> alive;
  {
    std::lock_guard guard{mutex_};
    for (const auto& known : barriers_)
      if (auto barrier = known.lock())
        alive.push_back(std::move(barrier));
  }
  for (const auto& barrier : alive)
    barrier->fail(rank); // a group without `rank` ignores it
}

} // namespace troupe::detail
