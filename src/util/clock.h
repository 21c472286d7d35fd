#pragma once

// Time, as every part of Tessera reads it: one Clock interface with the system's clock, a
// monotonic clock for durations, a clock tests move by hand, and the simulators' virtual clock.
// The engine's time-dependent parts (headroom windows, filter-pass ages, grace periods) read a
// Clock, so the extender (wall clock) and the replay (virtual clock) run the same code. Also
// the Sleeper the API cache's back-off waits on, so that tests never sleep for real.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "util/check.h"

namespace tessera {

/// Time in seconds: since the Unix epoch for the wall clocks, since an arbitrary start for the
/// monotonic and virtual ones. Implementations are thread-safe unless they say otherwise.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual double NowSeconds() const = 0;
};

/// The system clock.
class SystemClock final : public Clock {
 public:
  double NowSeconds() const override {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

/// `clock`, or the system clock when it is null (the default of every `clock` option).
inline const Clock* ClockOrSystem(const Clock* clock) {
  static const SystemClock system_clock;
  return clock != nullptr ? clock : &system_clock;
}

/// A clock that never goes back (steady_clock): for durations.
class MonotonicClock final : public Clock {
 public:
  double NowSeconds() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

/// A simulation's time: virtual seconds from the start of the run, moved only by its event
/// loop, never backwards (an invariant, checked). Nothing that reads it reads the system clock.
/// Not thread-safe; one per run.
class VirtualClock final : public Clock {
 public:
  double NowSeconds() const override { return now_s_; }
  /// Moves to `t_s`; `t_s` must not be earlier than now.
  void AdvanceTo(double t_s) {
    TESSERA_CHECK(t_s >= now_s_);
    now_s_ = t_s;
  }

 private:
  double now_s_ = 0;
};

/// A clock that moves only when told (tests). Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(double now = 1.7e9) : now_(now) {}
  double NowSeconds() const override { return now_.load(); }
  void Set(double now) { now_.store(now); }
  void Advance(double seconds) { now_.store(now_.load() + seconds); }

 private:
  std::atomic<double> now_;
};

/// Waits between retries. Sleep returns false when Wake was called (the caller is stopping),
/// true when the time passed. Implementations are thread-safe.
class Sleeper {
 public:
  virtual ~Sleeper() = default;
  virtual bool Sleep(double seconds) = 0;
  /// Ends every Sleep in progress and makes later ones return false at once.
  virtual void Wake() = 0;
};

/// Sleeps on a condition variable, so that Wake interrupts it.
class RealSleeper final : public Sleeper {
 public:
  bool Sleep(double seconds) override {
    std::unique_lock<std::mutex> lock(mutex_);
    return !cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return woken_; });
  }
  void Wake() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      woken_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool woken_ = false;  // GUARDED_BY(mutex_)
};

}  // namespace tessera
