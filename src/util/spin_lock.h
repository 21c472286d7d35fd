#pragma once

// Taking a contended mutex (std::mutex, tessera::Mutex) without going to sleep at once (the
// extender's hot verbs). A waiter that sleeps in the kernel leaves its vCPU idle, and on a virtual
// machine waking it costs ~0.1 ms typically and milliseconds in the tail; the extender's lock is
// held for a fraction of a millisecond per filter (the decisions; the answer is written after), so
// a waiter that retries for that long usually gets it without a wake-up (docs/PERFORMANCE.md, the
// extender under load).

#include <sched.h>

#include <chrono>
#include <mutex>

namespace tessera {

/// `tessera serve --spin-us`'s default: how long a server thread keeps trying a socket read or
/// the extender's lock before it sleeps (microseconds).
inline constexpr int kDefaultSpinMicroseconds = 250;

/// Locks `m`: tries without blocking for up to `spin` (yielding the core between tries, so a
/// thread that is ready on it runs), then blocks. Unlock as usual (e.g. adopt into a
/// lock_guard).
template <typename Lockable>
#if defined(__clang__)
// It returns holding `m`, which clang's -Wthread-safety cannot see through a template; callers
// that are checked take `m` through tessera::MutexLock (util/mutex.h).
__attribute__((no_thread_safety_analysis))
#endif
void LockSpinning(Lockable& m, std::chrono::microseconds spin) {
  if (m.try_lock()) return;
  if (spin.count() > 0) {
    const auto deadline = std::chrono::steady_clock::now() + spin;
    do {
      sched_yield();
      if (m.try_lock()) return;
    } while (std::chrono::steady_clock::now() < deadline);
  }
  m.lock();
}

}  // namespace tessera
