#include "shm.hpp"
#include "troupe/actors/detail/readable.hpp"

#include <algorithm>

#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "troupe/actors/error.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace troupe::detail {

namespace {

/// Fields 3 (state) and 22 (start time) of /proc/<pid>/stat; the command name (field 2) may
/// hold spaces and parentheses, so parsing starts after its last ')'.
std::optional<std::pair<char, std::uint64_t>> stat_of(std::int32_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
  std::string line;
  if (!std::getline(in, line))
    return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos)
    return std::nullopt;
  std::istringstream fields{line.substr(close + 2)};
  char state = 0;
  fields >> state;
  std::string skip;
  for (int field = 4; field < 22; ++field)
    fields >> skip;
  std::uint64_t start = 0;
  fields >> start;
  return std::pair{state, start};
}

} // namespace

process_id process_id::self() {
  static const process_id me = [] {
    process_id id;
    id.pid = static_cast<std::int32_t>(getpid());
    if (auto s = stat_of(id.pid))
      id.start_time = s->second;
    return id;
  }();
  // A forked child has another pid: recompute then.
  if (me.pid != getpid()) {
    process_id id;
    id.pid = static_cast<std::int32_t>(getpid());
    if (auto s = stat_of(id.pid))
      id.start_time = s->second;
    return id;
  }
  return me;
}

bool process_id::alive() const {
  if (pid <= 0)
    return false;
  if (kill(pid, 0) != 0 && errno != EPERM)
    return false;
  const auto s = stat_of(pid);
  if (!s)
    return true; // no /proc to ask: kill() said it exists
  return s->first != 'Z' && s->first != 'X' && s->second == start_time;
}

void init_robust_mutex(pthread_mutex_t& mutex) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&mutex, &attr);
  pthread_mutexattr_destroy(&attr);
}

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, deadline until) {
  timespec timeout{};
  timespec* timeout_ptr = nullptr;
  if (until) {
    const auto left = *until - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero())
      return;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    timeout.tv_sec = ns / 1'000'000'000;
    timeout.tv_nsec = ns % 1'000'000'000;
    timeout_ptr = &timeout;
  }
  // Not FUTEX_PRIVATE: the word lives in memory shared between processes.
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, expected, timeout_ptr,
          nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr,
          0);
}

mapped_object::mapped_object(mapped_object&& other) noexcept
  : fd(std::exchange(other.fd, -1)), base(std::exchange(other.base, nullptr)),
    size(std::exchange(other.size, 0)) {}

mapped_object& mapped_object::operator=(mapped_object&& other) noexcept {
  std::swap(fd, other.fd);
  std::swap(base, other.base);
  std::swap(size, other.size);
  return *this;
}

mapped_object::~mapped_object() {
  if (base != nullptr)
    munmap(base, size);
  if (fd >= 0)
    close(fd);
}

namespace {

std::optional<mapped_object> map_fd(int fd, std::size_t size) {
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    close(fd);
    return std::nullopt;
  }
  mapped_object out;
  out.fd = fd;
  out.base = base;
  out.size = size;
  return out;
}

} // namespace

std::size_t shm_bytes_free() {
  struct statvfs fs {};
  return statvfs("/dev/shm", &fs) == 0 ? static_cast<std::size_t>(fs.f_bavail) * fs.f_frsize : 0;
}

std::optional<mapped_object> create_object(const std::string& name, std::size_t size,
                                           bool reserve) {
  const auto path = "/" + name;
  const int fd = shm_open(path.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0)
    return std::nullopt;
  // Checked, not reserved: reserving (fallocate) zero-fills every page up front, and the page
  // faults of the first write then cost the same again. A race with another process filling
  // /dev/shm meanwhile remains possible, and would show as SIGBUS on that write.
  const auto free_bytes = reserve ? shm_bytes_free() : size;
  const int rc =
    free_bytes < size ? ENOSPC : (ftruncate(fd, static_cast<off_t>(size)) == 0 ? 0 : errno);
  if (rc != 0) {
    close(fd);
    shm_unlink(path.c_str());
    throw capacity_error("cannot allocate " + readable_bytes(size) + " of shared memory for " +
                         name + ": " + std::strerror(rc) + " (/dev/shm has " +
                         readable_bytes(free_bytes) + " free)");
  }
  auto mapped = map_fd(fd, size);
  if (!mapped) {
    shm_unlink(path.c_str());
    throw capacity_error("cannot map " + readable_bytes(size) + " of shared memory for " + name +
                         ": " + std::strerror(errno));
  }
  return mapped;
}

std::optional<mapped_object> open_object(const std::string& name, std::size_t at_most) {
  const int fd = shm_open(("/" + name).c_str(), O_RDWR, 0600);
  if (fd < 0)
    return std::nullopt;
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size == 0) {
    close(fd);
    return std::nullopt;
  }
  return map_fd(fd, std::min(static_cast<std::size_t>(st.st_size), at_most));
}

} // namespace troupe::detail
