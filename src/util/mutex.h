#pragma once

// A mutex whose locking the compiler checks: with clang's -Wthread-safety, a member declared
// TESSERA_GUARDED_BY(m) read or written without holding m, or a method declared
// TESSERA_REQUIRES(m) called without it, is a compile error (tests/e2e/thread_safety_test.sh
// builds the extender that way). Other compilers see plain std::mutex code: the macros expand to
// nothing. Written by hand because std::mutex and std::lock_guard carry no such attributes in
// libstdc++ (Abseil's Mutex does, but is not a Debian library we otherwise need).

#include <chrono>
#include <mutex>

#include "util/spin_lock.h"

#if defined(__clang__)
#define TESSERA_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TESSERA_THREAD_ANNOTATION(x)
#endif

#define TESSERA_CAPABILITY(name) TESSERA_THREAD_ANNOTATION(capability(name))
#define TESSERA_SCOPED_CAPABILITY TESSERA_THREAD_ANNOTATION(scoped_lockable)
#define TESSERA_GUARDED_BY(m) TESSERA_THREAD_ANNOTATION(guarded_by(m))
#define TESSERA_PT_GUARDED_BY(m) TESSERA_THREAD_ANNOTATION(pt_guarded_by(m))
#define TESSERA_REQUIRES(...) TESSERA_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define TESSERA_EXCLUDES(...) TESSERA_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define TESSERA_ACQUIRE(...) TESSERA_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define TESSERA_RELEASE(...) TESSERA_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TESSERA_TRY_ACQUIRE(...) TESSERA_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define TESSERA_NO_THREAD_SAFETY_ANALYSIS TESSERA_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace tessera {

/// std::mutex with the capability attribute (BasicLockable and Lockable, so that
/// std::condition_variable_any and std::lock_guard work with it too).
class TESSERA_CAPABILITY("mutex") Mutex {
 public:
  void lock() TESSERA_ACQUIRE() { m_.lock(); }
  void unlock() TESSERA_RELEASE() { m_.unlock(); }
  bool try_lock() TESSERA_TRY_ACQUIRE(true) { return m_.try_lock(); }

 private:
  std::mutex m_;
};

/// Holds a Mutex for its scope (std::lock_guard).
class TESSERA_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& m) TESSERA_ACQUIRE(m) : m_(m) { m_.lock(); }
  /// Tries for up to `spin` before it blocks (LockSpinning: the extender's hot verbs).
  MutexLock(Mutex& m, std::chrono::microseconds spin)
      TESSERA_ACQUIRE(m) TESSERA_NO_THREAD_SAFETY_ANALYSIS : m_(m) {
    LockSpinning(m_, spin);
  }
  ~MutexLock() TESSERA_RELEASE() { m_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& m_;
};

/// Holds a Mutex for its scope, with unlock() and lock() in between (std::unique_lock): for a
/// thread that releases the lock around a call that may block, and for
/// std::condition_variable_any::wait.
class TESSERA_SCOPED_CAPABILITY UniqueMutexLock {
 public:
  explicit UniqueMutexLock(Mutex& m) TESSERA_ACQUIRE(m) : m_(m) { m_.lock(); }
  ~UniqueMutexLock() TESSERA_RELEASE() {
    if (held_) m_.unlock();
  }
  void lock() TESSERA_ACQUIRE() {
    m_.lock();
    held_ = true;
  }
  void unlock() TESSERA_RELEASE() {
    held_ = false;
    m_.unlock();
  }
  UniqueMutexLock(const UniqueMutexLock&) = delete;
  UniqueMutexLock& operator=(const UniqueMutexLock&) = delete;

 private:
  Mutex& m_;
  bool held_ = true;
};

}  // namespace tessera
