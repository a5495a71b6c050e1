// ThreadSanitizer cannot see the synchronization inside Debian's prebuilt CAF libraries, so
// every message would look like a race between its sender and its receiver. troupe tells it
// instead: a release on the receiving actor's address before each send, an acquire on its own
// address when a handler starts. Outside TSAN builds these compile to nothing.
#pragma once

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace troupe::detail {

inline void tsan_release(const void* addr) noexcept {
#if defined(__SANITIZE_THREAD__)
  __tsan_release(const_cast<void*>(addr));
#else
  (void)addr;
#endif
}

inline void tsan_acquire(const void* addr) noexcept {
#if defined(__SANITIZE_THREAD__)
  __tsan_acquire(const_cast<void*>(addr));
#else
  (void)addr;
#endif
}

} // namespace troupe::detail
