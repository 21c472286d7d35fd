#pragma once

// Time as the live parts of Tessera read it (the extender's assume TTL, HAMi's vgpu-time, the
// API cache's back-off), behind small interfaces so that tests move time by hand and never
// sleep for real.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace tessera {

/// Wall-clock time in seconds since the Unix epoch. Implementations are thread-safe.
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
