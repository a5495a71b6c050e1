#include "thread/parking_spot.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace troupe::detail {

namespace {

void futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op | FUTEX_PRIVATE_FLAG, value,
            nullptr, nullptr, 0);
}

} // namespace

void parking_spot::sleep() noexcept {
  while (word_.load(std::memory_order_seq_cst) == asleep)
    futex(word_, FUTEX_WAIT, asleep);
  word_.store(awake, std::memory_order_seq_cst);
}

bool parking_spot::wake() noexcept {
  std::uint32_t expected = asleep;
  if (!word_.compare_exchange_strong(expected, woken, std::memory_order_seq_cst))
    return false;
  futex(word_, FUTEX_WAKE, 1);
  return true;
}

} // namespace troupe::detail
